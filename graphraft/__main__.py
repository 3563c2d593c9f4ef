from graphraft.cli import main

main()
