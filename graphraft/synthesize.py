"""`python -m graphraft.synthesize`: the synthesis command (the library is graphraft.synthesis)."""

if __name__ == "__main__":
    from graphraft.cli.synthesize import main

    main()
