"""A click group that imports a command's module only when that command runs.

``lorekit --version`` and ``lorekit --help`` should answer at once, without
importing the agents, the envs or the harness that the commands use. The group
knows its commands by name, as ``"module:attribute"`` plus the short help the
listing shows, and imports a module when its command is looked up to run.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click


@dataclass(frozen=True, slots=True)
class LazyCommand:
    """Where a command lives (``"package.module:attribute"``) and its short help.

    ``help`` is the first paragraph of the command's own help: ``lorekit --help``
    shortens it exactly as click would shorten the command's help."""

    target: str
    help: str

    def load(self) -> click.Command:
        module_name, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class LazyGroup(click.Group):
    """A group whose commands are imported on first use.

    Commands added the usual way (``add_command``, ``@group.command``) are
    served too, and win over a lazy entry of the same name."""

    def __init__(
        self, *args: Any, lazy_commands: Mapping[str, LazyCommand] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, LazyCommand] = dict(lazy_commands or {})

    def add_lazy_command(self, name: str, target: str, help: str) -> None:
        """Serve the command at ``target`` ("module:attribute") as ``name``."""
        self.lazy_commands[name] = LazyCommand(target, help)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in self.lazy_commands:
            command = self.lazy_commands[cmd_name].load()
            self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing of ``--help``, from the table for commands not imported yet."""
        listed: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None:
                command = click.Command(name, help=self.lazy_commands[name].help)
            if not command.hidden:
                listed.append((name, command))
        if listed:
            limit = formatter.width - 6 - max(len(name) for name, _ in listed)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in listed])
