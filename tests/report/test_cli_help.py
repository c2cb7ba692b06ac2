"""Every subcommand, option and positional argument of the command line says what it is for (help=)."""
import argparse

from gpusim.report.cli import build_parser


def _actions(parser, path=("gpusim",)):
    """(command path, action) of every argument of the parser and its subcommands, at any depth."""
    for action in parser._actions:
        yield path, action
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, path + (name,))


def test_every_argument_and_subcommand_has_help():
    missing = []
    for path, action in _actions(build_parser()):
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue        # argparse's own text
        if not action.help:
            missing.append(f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}")
        if isinstance(action, argparse._SubParsersAction):     # each subcommand's line in its parent's --help
            helped = {a.dest for a in action._choices_actions if a.help}
            missing += [f"{' '.join(path)} {name} (subcommand)" for name in action.choices if name not in helped]
    assert not missing, "arguments without help: " + ", ".join(missing)
