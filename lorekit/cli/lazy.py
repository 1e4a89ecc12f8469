"""A click group that imports a command's module only when that command runs.

``lorekit --version`` and ``lorekit --help`` should answer at once, without
importing the agents, the envs or the harness that the commands use. The group
knows its commands by name, as ``"module:attribute"`` plus the short help the
listing shows, and imports a module when its command is looked up to run.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import click

from lorekit.registry import REGISTRY


@dataclass(frozen=True, slots=True)
class LazyCommand:
    """Where a command lives (``"package.module:attribute"``) and its short help.

    ``help`` is the first paragraph of the command's own help: ``lorekit --help``
    shortens it exactly as click would shorten the command's help."""

    target: str
    help: str

    def load(self) -> click.Command:
        command = pkgutil.resolve_name(self.target)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


def registered_commands() -> dict[str, LazyCommand]:
    """The commands of :mod:`lorekit.registry` (the core's, the methods', plugins')."""
    return {
        entry.name: LazyCommand(entry.target_name, str(entry.meta.get("help") or entry.description))
        for entry in REGISTRY.entries("command")
    }


class LazyGroup(click.Group):
    """A group whose commands are imported on first use.

    ``lazy_commands`` is a table, or a function giving one that is called the
    first time the commands are listed or looked up (the root group reads the
    registry then, so ``lorekit --version`` loads no plugin). Commands added
    the usual way (``add_command``, ``@group.command``) are served too, and win
    over a lazy entry of the same name."""

    def __init__(
        self,
        *args: Any,
        lazy_commands: Mapping[str, LazyCommand]
        | Callable[[], Mapping[str, LazyCommand]]
        | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._lazy_source = lazy_commands
        self._lazy: dict[str, LazyCommand] | None = None

    @property
    def lazy_commands(self) -> dict[str, LazyCommand]:
        if self._lazy is None:
            source = self._lazy_source
            self._lazy = dict((source() if callable(source) else source) or {})
        return self._lazy

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
