"""`python -m graphraft.train l1|l2 --config FILE`: the training command (the library is
graphraft.training)."""

if __name__ == "__main__":
    from graphraft.cli.train import main

    main()
