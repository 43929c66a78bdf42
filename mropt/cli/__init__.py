"""The ``mropt`` command line: thin wrappers that parse, call the library and print.

Each module adds its subcommands with ``add_parsers(subparsers)``; a subcommand's
handler takes the parsed arguments and returns the exit status. Bad input raises
:class:`~mropt.model.errors.InputError`, which :func:`mropt.cli.main.main` prints on
one line on stderr, exiting with status 2.
"""
