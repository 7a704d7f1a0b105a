"""Pipeline schedules as data: one list of actions per rank, built, completed with messages, and simulated.

Nothing here communicates: a schedule class (``schedules.py``) runs the
list this module builds for its rank, and tests check the lists of all
ranks together. The steps:

1. **Compute order.** ``gpipe_order``, ``one_f_one_b_order`` and
   ``interleaved_order`` give, for one rank, the order of its forward
   (``F``) and backward (``B``) actions, each naming a stage and a
   microbatch (the module docstring of ``minigrad_dist.pipelining`` draws
   the three schedules). Stage ``s`` lives on rank ``s % pp``.
2. **Messages.** ``with_communication`` puts a ``RECV_F`` before every
   forward whose input comes from the stage before, a ``SEND_F`` after every
   forward whose output feeds the next stage, a ``RECV_B`` before every
   backward that needs the next stage's gradient and a ``SEND_B`` after
   every backward whose input gradient goes back. Sends never wait for
   their receiver (they are nonblocking), receives do.
3. **Simulation.** ``simulate`` runs every rank's list at once with costs
   per action (sends free, a receive waits until its message was sent): it
   finds deadlocks (no rank can move), messages sent but never received, and
   reports each rank's busy spans, the makespan and the peak number of
   microbatches whose activations a stage holds (forward done, backward not).
4. **Validation.** ``validate_order`` checks every rule a schedule must
   keep (each microbatch's forward and backward exactly once, on the rank
   that owns the stage, forward before backward, sends matched by receives)
   and then simulates it.

Actions print as PyTorch's do: ``1F0`` is stage 1's forward of
microbatch 0, ``0SEND_B3`` stage 0 sending its input gradient of
microbatch 3 (to no stage: stage 0 has none before it, so that one never
appears).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "Action",
    "BACKWARD",
    "FORWARD",
    "RECV_B",
    "RECV_F",
    "SEND_B",
    "SEND_F",
    "ScheduleError",
    "Simulation",
    "draw",
    "gpipe_order",
    "interleaved_order",
    "one_f_one_b_order",
    "pipeline_order",
    "simulate",
    "stage_rank",
    "validate_order",
    "with_communication",
]

FORWARD = "F"
BACKWARD = "B"
SEND_F = "SEND_F"
RECV_F = "RECV_F"
SEND_B = "SEND_B"
RECV_B = "RECV_B"
COMPUTE = (FORWARD, BACKWARD)
KINDS = (FORWARD, BACKWARD, SEND_F, RECV_F, SEND_B, RECV_B)


class ScheduleError(RuntimeError):
    """A schedule that breaks a rule (deadlock, unmatched message, order), with the rank and action at fault."""


class Action(NamedTuple):
    """One step of a rank's schedule: ``kind`` (``F``, ``B``, ``SEND_F``, ...) of ``stage`` on ``microbatch``."""

    stage: int
    kind: str
    microbatch: int

    def __str__(self) -> str:
        return f"{self.stage}{self.kind}{self.microbatch}"

    __repr__ = __str__


def stage_rank(stage: int, pp: int) -> int:
    """The rank that runs ``stage`` when stages are placed round-robin on ``pp`` ranks."""
    return stage % pp


# -- step 1: compute order ----------------------------------------------------------------


def gpipe_order(rank: int, pp: int, n_microbatches: int) -> list:
    """GPipe on one rank: every forward, then every backward, microbatches in order."""
    forwards = [Action(rank, FORWARD, mb) for mb in range(n_microbatches)]
    return forwards + [Action(rank, BACKWARD, mb) for mb in range(n_microbatches)]


def one_f_one_b_order(rank: int, pp: int, n_microbatches: int) -> list:
    """1F1B on one rank: ``pp - rank - 1`` warm-up forwards, then alternate forward and backward, then drain."""
    warmup = min(pp - rank - 1, n_microbatches)
    order = [Action(rank, FORWARD, mb) for mb in range(warmup)]
    for i in range(n_microbatches - warmup):
        order += [Action(rank, FORWARD, warmup + i), Action(rank, BACKWARD, i)]
    return order + [Action(rank, BACKWARD, mb) for mb in range(n_microbatches - warmup, n_microbatches)]


def interleaved_order(rank: int, pp: int, n_microbatches: int, stages_per_rank: int) -> list:
    """Interleaved 1F1B on one rank holding stages ``rank, rank + pp, ...`` (Narayanan et al. 2021).

    The rank walks "virtual microbatches" ``k = 0 .. m*v - 1``: groups of
    ``pp`` microbatches go through its first stage, then the same group
    through its second stage, and so on; backward visits the stages in
    reverse. The warm-up is ``2 (pp - rank - 1) + (v - 1) pp`` forwards
    (all of them when ``m == pp``), then one forward and one backward
    alternate.

    Raises:
        ValueError: ``n_microbatches`` is not a multiple of ``pp``.
    """
    if n_microbatches % pp:
        raise ValueError(
            f"interleaved 1F1B needs n_microbatches to be a multiple of the number of ranks: got "
            f"{n_microbatches} microbatches on {pp} ranks; use a multiple of {pp}"
        )
    v = stages_per_rank
    total = n_microbatches * v

    def action(k, kind):
        chunk = (k % (pp * v)) // pp
        if kind == BACKWARD:
            chunk = v - 1 - chunk
        microbatch = (k // (pp * v)) * pp + k % pp
        return Action(chunk * pp + rank, kind, microbatch)

    warmup = total if n_microbatches == pp else min(2 * (pp - rank - 1) + (v - 1) * pp, total)
    order = [action(k, FORWARD) for k in range(warmup)]
    for i in range(total - warmup):
        order += [action(warmup + i, FORWARD), action(i, BACKWARD)]
    return order + [action(k, BACKWARD) for k in range(total - warmup, total)]


def pipeline_order(
    schedule: str, pp: int, n_microbatches: int, stages_per_rank: int = 1, forward_only: bool = False
) -> dict:
    """Every rank's compute actions: ``{rank: [Action, ...]}`` for ``schedule`` in ``gpipe``, ``1f1b``, ``interleaved``.

    ``forward_only`` keeps the forwards (a schedule without a loss function runs no backward).

    Raises:
        ValueError: an unknown schedule, sizes below 1, or several stages per rank for GPipe/1F1B.
    """
    makers = {"gpipe": gpipe_order, "1f1b": one_f_one_b_order}
    if schedule not in (*makers, "interleaved"):
        raise ValueError(f"unknown schedule {schedule!r}; choose 'gpipe', '1f1b' or 'interleaved'")
    if pp < 1 or n_microbatches < 1 or stages_per_rank < 1:
        raise ValueError(
            f"pp, n_microbatches and stages_per_rank must be at least 1, got {pp}, {n_microbatches}, {stages_per_rank}"
        )
    if schedule != "interleaved" and stages_per_rank != 1:
        raise ValueError(f"{schedule} runs one stage per rank, got stages_per_rank={stages_per_rank}")
    orders = {}
    for rank in range(pp):
        if schedule == "interleaved":
            order = interleaved_order(rank, pp, n_microbatches, stages_per_rank)
        else:
            order = makers[schedule](rank, pp, n_microbatches)
        orders[rank] = [a for a in order if a.kind == FORWARD] if forward_only else order
    return orders


# -- step 2: messages -----------------------------------------------------------------------


def with_communication(order: list, num_stages: int) -> list:
    """``order`` (compute actions) with the receives before and the sends after each action that needs them."""
    full = []
    for action in order:
        stage, kind, mb = action
        if kind == FORWARD:
            if stage > 0:
                full.append(Action(stage, RECV_F, mb))
            full.append(action)
            if stage < num_stages - 1:
                full.append(Action(stage, SEND_F, mb))
        elif kind == BACKWARD:
            if stage < num_stages - 1:
                full.append(Action(stage, RECV_B, mb))
            full.append(action)
            if stage > 0:
                full.append(Action(stage, SEND_B, mb))
        else:
            raise ValueError(f"with_communication: expected compute actions (F, B), got {action}")
    return full


def message_key(action: Action) -> tuple:
    """The message a send or receive action carries: ``(direction, sending stage, receiving stage, microbatch)``."""
    stage, kind, mb = action
    return {
        SEND_F: (FORWARD, stage, stage + 1, mb),
        RECV_F: (FORWARD, stage - 1, stage, mb),
        SEND_B: (BACKWARD, stage, stage - 1, mb),
        RECV_B: (BACKWARD, stage + 1, stage, mb),
    }[kind]


# -- step 3: simulation ---------------------------------------------------------------------


class Simulation(NamedTuple):
    """What ``simulate`` found: per rank the ``(start, end, action)`` compute spans; makespan; peak live per stage."""

    spans: dict
    makespan: float
    peak_live: dict

    def idle_fraction(self, rank: int) -> float:
        """The share of the makespan ``rank`` spends not computing."""
        busy = sum(end - start for start, end, _ in self.spans[rank])
        return 1.0 - busy / self.makespan


def simulate(orders: dict, num_stages: int, forward_cost: float = 1.0, backward_cost: float = 2.0) -> Simulation:
    """Run every rank's action list together (messages are free, receives wait for their send).

    Args:
        orders: ``{rank: [Action, ...]}`` with messages (``with_communication``).
        num_stages: the number of stages.
        forward_cost, backward_cost: the time one forward / backward takes.

    Raises:
        ScheduleError: a deadlock (naming each stuck rank's next action) or a message never received.
    """
    clock = dict.fromkeys(orders, 0.0)
    position = dict.fromkeys(orders, 0)
    sent = {}
    spans = {rank: [] for rank in orders}
    live = dict.fromkeys(range(num_stages), 0)
    peak = dict.fromkeys(range(num_stages), 0)
    cost = {FORWARD: forward_cost, BACKWARD: backward_cost}
    while any(position[r] < len(orders[r]) for r in orders):
        moved = False
        for rank, order in orders.items():
            while position[rank] < len(order):
                action = order[position[rank]]
                if action.kind in (RECV_F, RECV_B):
                    key = message_key(action)
                    if key not in sent:
                        break
                    clock[rank] = max(clock[rank], sent.pop(key))
                elif action.kind in (SEND_F, SEND_B):
                    sent[message_key(action)] = clock[rank]
                else:
                    start = clock[rank]
                    clock[rank] += cost[action.kind]
                    spans[rank].append((start, clock[rank], action))
                    live[action.stage] += 1 if action.kind == FORWARD else -1
                    peak[action.stage] = max(peak[action.stage], live[action.stage])
                position[rank] += 1
                moved = True
        if not moved:
            stuck = {r: str(orders[r][position[r]]) for r in orders if position[r] < len(orders[r])}
            raise ScheduleError(f"deadlock: every unfinished rank waits for a message never sent: {stuck}")
    if sent:
        raise ScheduleError(f"messages sent but never received (direction, from, to, microbatch): {sorted(sent)}")
    return Simulation(spans, max(clock.values(), default=0.0), peak)


# -- step 4: validation ---------------------------------------------------------------------


def validate_order(orders: dict, num_stages: int, n_microbatches: int, forward_only: bool = False) -> Simulation:
    """Check every rule of a pipeline schedule (see the module docstring); returns the simulation.

    Raises:
        ScheduleError: naming the first rule broken, the rank and the action.
    """
    pp = len(orders)
    seen = {}
    for rank, order in orders.items():
        for index, action in enumerate(order):
            if action.kind not in KINDS:
                raise ScheduleError(f"rank {rank}: unknown action kind in {action}")
            if stage_rank(action.stage, pp) != rank:
                raise ScheduleError(
                    f"rank {rank} runs {action}, but stage {action.stage} lives on rank {stage_rank(action.stage, pp)}"
                )
            if action.kind in COMPUTE:
                if action in seen:
                    raise ScheduleError(f"rank {rank} runs {action} twice")
                seen[action] = index
    kinds = (FORWARD,) if forward_only else COMPUTE
    for stage in range(num_stages):
        for mb in range(n_microbatches):
            for kind in kinds:
                if Action(stage, kind, mb) not in seen:
                    raise ScheduleError(f"no rank runs {Action(stage, kind, mb)}")
            if not forward_only and seen[Action(stage, BACKWARD, mb)] < seen[Action(stage, FORWARD, mb)]:
                raise ScheduleError(f"{Action(stage, BACKWARD, mb)} runs before {Action(stage, FORWARD, mb)}")
    _check_messages_matched(orders)
    return simulate(orders, num_stages)


def _check_messages_matched(orders: dict) -> None:
    sends, receives = {}, {}
    for rank, order in orders.items():
        for action in order:
            if action.kind in (SEND_F, SEND_B):
                sends.setdefault(message_key(action), []).append(rank)
            elif action.kind in (RECV_F, RECV_B):
                receives.setdefault(message_key(action), []).append(rank)
    for key in sorted(set(sends) | set(receives)):
        if len(sends.get(key, ())) != 1 or len(receives.get(key, ())) != 1:
            raise ScheduleError(
                f"message {key} (direction, from stage, to stage, microbatch) is sent by ranks "
                f"{sends.get(key, [])} and received by ranks {receives.get(key, [])}: each needs exactly one of each"
            )


def draw(simulation: Simulation, forward_cost: float = 1.0) -> str:
    """The simulated schedule as text, one line per rank and one column per ``forward_cost`` of time.

    A forward prints its microbatch's digit, a backward its letter (``a``
    for microbatch 0) once per column it lasts, a dot is idle time. Made for
    few microbatches (digits above 9 wrap) and one stage per rank.
    """
    width = round(simulation.makespan / forward_cost)
    lines = []
    for rank in sorted(simulation.spans):
        row = ["."] * width
        for start, end, action in simulation.spans[rank]:
            mark = str(action.microbatch % 10) if action.kind == FORWARD else chr(ord("a") + action.microbatch % 26)
            for column in range(round(start / forward_cost), round(end / forward_cost)):
                row[column] = mark
        lines.append(f"rank {rank}  " + "".join(row))
    return "\n".join(lines)
