"""How a team episode is shown: who did what when, and what they said.

A team run (:mod:`lorekit.agents.teams.runs`) leaves ``notes["team"]``
(:mod:`lorekit.agents.teams.results`): the organization, mode and clock, the
metrics, the event list and the message pool. Printed as a per-agent summary
(plans, model calls, tokens, time spent thinking on the clock, skills that
worked or failed, messages) and one timeline in clock order, messages
interleaved with plans, skills, reports and refusals, so a reader sees where
the team waited, who told whom what, and which failure made the leader
re-plan. Single crafter actions and model calls are counted per agent rather
than listed: a collection task has hundreds. The report (``report_view.js``)
draws the events on one lane per agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lorekit.agents.teams.results import MPT_KEYS, TC_KEYS, metric
from lorekit.agents.views import NotesView
from lorekit.tables import fit_table, say_left_out

TEXT_CHARS = 160
TIMELINE_LINES = 400
QUIET_KINDS = frozenset({"action", "call"})
"""Kinds counted in the per-agent table instead of listed on the timeline."""


@dataclass(frozen=True, slots=True)
class Line:
    """One timeline entry: when, who, what kind, and its text."""

    time: float
    tick: int | None
    agent: str
    kind: str
    text: str


def _cut(text: object, limit: int = TEXT_CHARS) -> str:
    s = " ".join(str(text if text is not None else "").split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _first(event: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if event.get(key) not in (None, ""):
            return event[key]
    return None


_SHOWN = frozenset({"time", "tick", "agent", "kind"})


def describe(event: Mapping[str, Any]) -> str:
    """One event in words; fields of kinds this does not know are listed as key=value."""
    kind = str(event.get("kind"))
    to = _first(event, "to", "addressee")
    text = _first(event, "text", "message", "command")
    if kind == "message":
        return f"-> {to or 'all'}: {_cut(text)}"
    if kind == "report":
        if text is None:
            text = ": ".join(
                str(x) for x in (_first(event, "status", "outcome"), event.get("task")) if x
            )
        return f"reports to {to or 'leader'}: {_cut(text)}"
    if kind == "refused":
        who = _first(event, "sender", "from", "by")
        why = _first(event, "reason", "why")
        return (
            f"refused {_cut(text, 80)!s}"
            + (f" from {who}" if who else "")
            + (f": {_cut(why, 100)}" if why else "")
        )
    if kind in ("plan", "monitor") and event.get("error"):
        return f"{kind} failed: {_cut(event['error'])}"
    if kind == "plan":
        task = _first(event, "task_at_hand", "task", "objective")
        stages = event.get("plan") or event.get("stages")
        queued = event.get("actions") or event.get("queue")
        text_out = f"plans: {_cut(task, 100)}" if task else "plans"
        if isinstance(stages, list):
            text_out += f" ({len(stages)} stages)"
        if isinstance(queued, list) and queued:
            text_out += " -> " + _cut("; ".join(map(str, queued)), 100)
        return text_out
    if kind == "monitor":
        status = _first(event, "status", "outcome") or "?"
        why = _first(event, "rationale", "reason")
        return f"monitor: {status}" + (f" ({_cut(why, 120)})" if why else "")
    if kind == "skill":
        call = _first(event, "call", "skill") or "?"
        if "success" not in event:
            return f"starts {_cut(call, 80)}"
        ok = "ok" if event.get("success") else "failed"
        why = _first(event, "reason", "result")
        ticks = event.get("ticks")
        return (
            f"{_cut(call, 80)} -> {ok}"
            + (f": {_cut(why, 100)}" if why else "")
            + (f" ({ticks} ticks)" if ticks is not None else "")
        )
    if kind == "action":
        return str(_first(event, "action") or "?")
    if kind == "call":
        tokens = int(event.get("prompt_tokens") or 0) + int(event.get("completion_tokens") or 0)
        latency = event.get("latency_s")
        return f"{event.get('role', '?')} model call, {tokens} tokens" + (
            f", {float(latency):.2f} s" if isinstance(latency, int | float) else ""
        )
    rest = {k: v for k, v in event.items() if k not in _SHOWN}
    return _cut(", ".join(f"{k}={v}" for k, v in rest.items()))


def _time(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _tick(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def timeline(team: Mapping[str, Any], *, quiet: Iterable[str] = QUIET_KINDS) -> list[Line]:
    """The team's events and messages in clock order (ties keep recorded order).

    Pool messages that the event list already tells (same time and sender, and
    the message's text, or a report's or refusal's text) are not repeated.
    """
    hidden = set(quiet)
    events = [e for e in team.get("events") or [] if isinstance(e, Mapping)]
    said: dict[tuple[float, str], list[str]] = {}
    for e in events:
        if e.get("kind") in ("message", "report", "refused"):
            key = (round(_time(e.get("time")), 6), str(e.get("agent")))
            said.setdefault(key, []).extend(
                str(e[k]) for k in ("text", "reason") if e.get(k) not in (None, "")
            )
    lines = [
        Line(
            _time(e.get("time")),
            _tick(e.get("tick")),
            str(e.get("agent") or "?"),
            str(e.get("kind")),
            describe(e),
        )
        for e in events
        if e.get("kind") not in hidden
    ]
    # The pool names players (p1, p2, ...); the events name agents: speak of agents.
    agent_of = {
        str(a["player"]): str(a["name"])
        for a in (team.get("org") or {}).get("members") or []
        if isinstance(a, Mapping) and a.get("player") and a.get("name")
    }
    for m in team.get("messages") or []:
        if not isinstance(m, Mapping):
            continue
        sender = str(_first(m, "sender", "from") or "?")
        sender = agent_of.get(sender, sender)
        text = str(m.get("text") or "")
        known = said.get((round(_time(m.get("time")), 6), sender), [])
        if any(t == text or t in text for t in known):
            continue  # the event list already tells it (a message, report or refusal)
        to = m.get("to")
        event = {"kind": "message", "to": agent_of.get(str(to), to), "text": m.get("text")}
        lines.append(
            Line(_time(m.get("time")), _tick(m.get("tick")), sender, "message", describe(event))
        )
    order = sorted(range(len(lines)), key=lambda i: (lines[i].time, i))
    return [lines[i] for i in order]


def agent_rows(team: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per agent: role, player and counts of what it did (from the event list;
    planning iterations from the metrics when they count them)."""
    rows: dict[str, dict[str, Any]] = {}
    org = team.get("org") or {}
    for a in org.get("members") or []:
        if isinstance(a, Mapping) and a.get("name"):
            rows[str(a["name"])] = _row(a.get("role"), a.get("player"))
    for e in team.get("events") or []:
        if not isinstance(e, Mapping):
            continue
        row = rows.setdefault(str(e.get("agent") or "?"), _row(None, None))
        kind = e.get("kind")
        if kind == "plan" and not e.get("error"):  # a pass that gave up made no plan
            row["plans"] += 1
        elif kind == "call":
            row["calls"] += 1
            row["tokens"] += int(e.get("prompt_tokens") or 0) + int(e.get("completion_tokens") or 0)
            row["think_s"] += _time(e.get("latency_s"))
        elif kind == "skill" and "success" in e:
            row["skills_ok" if e.get("success") else "skills_failed"] += 1
        elif kind == "action":
            row["actions"] += 1
        elif kind in ("message", "report"):
            row["messages"] += 1
        elif kind == "refused":
            row["refused"] += 1
    metrics = team.get("metrics") or {}
    for key in ("iterations", "plans"):  # the metrics' own counts, where they keep them
        counts = metrics.get(key)
        if isinstance(counts, Mapping):
            for name, count in counts.items():
                rows.setdefault(str(name), _row(None, None))[key] = count
    return rows


def _row(role: Any, player: Any) -> dict[str, Any]:
    return {
        "role": role or "",
        "player": player or "",
        "iterations": None,
        "plans": 0,
        "calls": 0,
        "tokens": 0,
        "think_s": 0.0,
        "skills_ok": 0,
        "skills_failed": 0,
        "actions": 0,
        "messages": 0,
        "refused": 0,
    }


def _number(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    return "NaN" if value != value else f"{value:.1f}{unit}"


def render_teams(notes: Mapping[str, Any], console: Console) -> None:
    """Everything a team left in an episode's notes (nothing if it left nothing)."""
    team = notes.get("team")
    if not isinstance(team, Mapping):
        return
    org = team.get("org") or {}
    metrics = team.get("metrics") or {}
    shape = str(org.get("org", "?")) + "".join(
        f" {k}={org[k]}" for k in ("leaves", "size") if isinstance(org.get(k), int)
    )
    if org.get("agents"):
        shape += " (custom)"
    console.print(
        f"\n[bold]Team[/bold]  org={escape(shape)}  mode={escape(str(team.get('mode')))}  "
        f"clock={escape(str(team.get('clock')))}  "
        f"TC={_number(metric(metrics, TC_KEYS), ' s')}  "
        f"mPT={_number(metric(metrics, MPT_KEYS))}  ticks={team.get('ticks', '-')}  "
        f"progress={escape(str(team.get('progress') or '-'))}"
    )
    rows = agent_rows(team)
    if rows:
        table = Table(
            "agent",
            "role",
            "player",
            "iterations",
            "plans",
            "model calls",
            "tokens",
            "thinking s",
            "skills ok",
            "failed",
            "actions",
            "messages",
            "refused",
            title="agents",
        )
        for name, r in rows.items():
            table.add_row(
                escape(name),
                escape(str(r["role"])),
                escape(str(r["player"])),
                "-" if r["iterations"] is None else str(r["iterations"]),
                str(r["plans"]),
                str(r["calls"]),
                str(r["tokens"]),
                f"{r['think_s']:.1f}",
                str(r["skills_ok"]),
                str(r["skills_failed"]),
                str(r["actions"]),
                str(r["messages"]),
                str(r["refused"]),
            )
        left_out = fit_table(
            console,
            table,
            keep=("agent", "role", "model calls", "tokens", "actions"),
            drop=_AGENT_COLUMNS_LAST,
        )
        console.print(table)
        say_left_out(console, left_out)
    lines = timeline(team)
    console.print(f"[bold]timeline[/bold] ({len(lines)} entries, clock seconds)")
    for line in lines[:TIMELINE_LINES]:
        tick = f"t{line.tick}" if line.tick is not None else ""
        style = {"message": "cyan", "report": "cyan", "refused": "red", "plan": "bold"}.get(
            line.kind, ""
        )
        text = escape(line.text)
        console.print(
            f"{line.time:8.1f}s {tick:>6} {escape(line.agent):<10} "
            + (f"[{style}]{text}[/{style}]" if style else text),
            highlight=False,
        )
    if len(lines) > TIMELINE_LINES:
        console.print(f"... {len(lines) - TIMELINE_LINES} more entries (lorekit runs export)")


_AGENT_COLUMNS_LAST = (
    "refused", "messages", "thinking s", "plans", "iterations", "failed", "skills ok", "player"
)  # fmt: skip
"""The agents table's columns that give way first in a narrow terminal."""


def render_team_run(store: Any, run_id: str, console: Console) -> None:
    """One line per team episode: success, TC, mPT, ticks, messages."""
    episodes: Sequence[Any] = store.episodes(run_id)
    table = Table(
        "episode", "status", "TC s", "mPT", "ticks", "messages", "progress", title="team episodes"
    )
    shown = 0
    for e in episodes:
        team = (e.info.get("notes") or {}).get("team")
        if not isinstance(team, Mapping):
            continue
        metrics = team.get("metrics") or {}
        table.add_row(
            escape(e.episode_key),
            e.status,
            _number(metric(metrics, TC_KEYS)),
            _number(metric(metrics, MPT_KEYS)),
            str(team.get("ticks", "-")),
            str(len(team.get("messages") or [])),
            escape(str(team.get("progress") or "-")),
        )
        shown += 1
    if shown:
        fit_table(console, table, keep=("episode", "status", "TC s", "mPT", "ticks"))
        console.print(table)


def _is_event(e: object) -> bool:
    return isinstance(e, Mapping) and "agent" in e and "kind" in e and ("time" in e or "tick" in e)


def has_events(value: object, depth: int = 0) -> bool:
    """Whether a list of team events (``{agent, kind, time or tick, ...}``) sits in
    ``value``, two levels deep at most: what the report's script looks for."""
    if depth > 2:
        return False
    if isinstance(value, list):
        return bool(value) and all(_is_event(e) for e in value)
    if isinstance(value, Mapping):
        return any(has_events(v, depth + 1) for v in value.values())
    return False


class TeamView:
    """A team's notes: organization, per-agent counts and the timeline."""

    name = "teams"
    report_script = "lorekit.agents.teams:report_view.js"

    def claims(self, notes: Mapping[str, Any]) -> bool:
        return isinstance(notes.get("team"), Mapping) or has_events(notes)

    def goal(self, notes: Mapping[str, Any]) -> str | None:
        return None

    def header(self, notes: Mapping[str, Any]) -> str | None:
        return None

    def show(self, notes: Mapping[str, Any], console: Console) -> None:
        render_teams(notes, console)


VIEW: NotesView = TeamView()
