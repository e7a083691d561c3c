from shardpy.cli.app import main

main()
