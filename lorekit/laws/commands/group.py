"""``lorekit laws``: From Laws to Motivation's commands, gathered into one group.

The group is what :mod:`lorekit.laws.plugin` registers; each command lives in a
module of its own beside this one. Loading the group imports those modules,
which import crafter, torch and the model layer only inside their commands, so
``lorekit laws --help`` stays fast and works without the extras.
"""

from __future__ import annotations

import click

from lorekit.laws.commands.collect import collect_cmd
from lorekit.laws.commands.extract import extract
from lorekit.laws.commands.learn import learn_cmd
from lorekit.laws.commands.rewards import rewards_cmd
from lorekit.laws.commands.score import score_cmd
from lorekit.laws.commands.scores import scores
from lorekit.laws.commands.train import train


@click.group()
def laws() -> None:
    """Laws of crafter from interaction records: collect, learn, score."""


for _command in (collect_cmd, learn_cmd, score_cmd, extract, rewards_cmd, scores, train):
    laws.add_command(_command)
