"""Who sees what of a detection under a secret key (threat model: docs/reliability.md, "Detection as an oracle").

Evidence under a key that grows smoothly as a text approaches that key's mark (a model's z, the bits of each
sentence under the best-guess identity, KGW's green-token counts, a p-value of a text not flagged) teaches anyone
who may ask for it to forge the mark: keep an edit when the shown score rises (issue 46: a forged "watermarked ·
model 1" at p = 4.8e-7 in 168 queries). So:

- A key holder (the CLI, a page on a server listening on this machine only, or a DASH_ADMIN=1 server: those who
  could read the master secret anyway) sees everything.
- Anyone else asking an identity-keyed method (`keyed` below) gets the verdict; for a flagged text also its
  corrected p and the identity; for a text not flagged nothing that moves (no score, z, p, bits, counts, colours
  or best guess). Each such query is spent from a per-client and a per-server budget (`QueryBudget`) and
  recorded in the run log. The client is the connection's remote address, or its Streamlit session where the
  address is unknown (backend.store.scope.current_client), not the URL's run scope: a new tab is no new budget. A
  client's budget is at most a share of the server's, so no one client can spend it for everyone.
- Public keys show everything to everyone: the demo identity (its secret is public) and the methods keyed by
  settings the asker supplies (transformers' KGW hashing key, SynthID's keys). Anyone can write those marks, and
  the page says so.
"""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, replace

from backend.errors import UserError
from backend.params import require
from backend.store.scope import current_client, current_scope

WITHHELD = ("withheld: evidence under this key is shown to its holders only (the operator of this server); "
            "the verdict is all a text that is not flagged gets")


def keyed(method) -> bool:
    """Detection under a registered identity's secret key (not a public key the asker supplies)."""
    return not (method.is_baseline or method.identity_free)


def withhold(found):
    """What someone without the key sees of `found` (a Detection under a secret, non-demo key)."""
    if found.demo:
        return found
    plain = tuple((text, "", "") for text, _, _ in found.pieces)
    if found.flagged:  # the mark is there: its verdict, the identity and the corrected p, nothing per unit
        return replace(found, score=math.nan, z=None, p_value=None, p_corrected=found.p_family,
                       guess_model=found.model_address,
                       guess_user=found.user_address, levels=(), pieces=plain, units=(), report=None,
                       evidence="flagged; the per-sentence and per-token evidence is shown to the key's holders only")
    return replace(found, score=math.nan, z=None, p_value=None, p_corrected=None, guess_model=0, guess_user=0,
                   levels=(), pieces=plain, units=(), report=None, evidence=WITHHELD, corrected_over="")


MAX_CLIENT_SHARE = 0.25  # one client's budget is at most this share of the server's


@dataclass(frozen=True)
class BudgetLimits:
    per_client: int = 30  # keyed verdicts one client (remote address, else session) may ask for per window
    per_server: int = 300  # all clients together
    window_s: float = 60.0

    def __post_init__(self):
        require(0 < self.per_client <= MAX_CLIENT_SHARE * self.per_server,
                f"A client's query budget ({self.per_client}) must be at most {MAX_CLIENT_SHARE:.0%} of the "
                f"server's ({self.per_server}): one client must not be able to spend it for everyone.")


class QueryBudget:
    """Sliding-window counts of keyed detections by those who do not hold the key, per client and per server."""

    def __init__(self, limits: BudgetLimits = BudgetLimits(), clock=time.monotonic) -> None:
        self.limits, self.clock = limits, clock
        self._lock = threading.Lock()
        self._server: deque[float] = deque()
        self._clients: dict[str, deque[float]] = {}

    def spend(self, client: str) -> None:
        """Count one query, or refuse it with a UserError saying when the next one is allowed."""
        now, limits = self.clock(), self.limits
        with self._lock:
            mine = self._clients.setdefault(client, deque())
            for times in (self._server, mine):
                while times and times[0] <= now - limits.window_s:
                    times.popleft()
            for times, cap, whose in ((mine, limits.per_client, "your"),
                                      (self._server, limits.per_server, "this server's")):
                if len(times) >= cap:
                    wait = times[0] + limits.window_s - now
                    raise UserError(f"Keyed detection: {whose} budget of {cap} verdicts per "
                                    f"{limits.window_s:g} s is spent; the next one is allowed in {wait:.0f} s. "
                                    "(A detector answering without limit teaches forging its mark.)")
            mine.append(now)
            self._server.append(now)


BUDGET = QueryBudget()  # one per server process


def spend_query(method: str, model_address: int) -> None:
    """Spend one keyed query of the current client and record it (or its refusal) in the run log."""
    client = current_client() or current_scope() or "cli"
    try:
        BUDGET.spend(client)
    except UserError:
        _record(method, model_address, refused=True)
        raise
    _record(method, model_address, refused=False)


def _record(method: str, model_address: int, refused: bool) -> None:
    """A run row per keyed query of a non-holder: the run log shows who asked how often (best effort)."""
    from backend.store.db import StoreUnavailable
    from backend.store.runlog import record_lone_run

    try:
        record_lone_run(feature="watermark", action="keyed-detect", model_id="", fingerprint="",
                        params=f'{{"method": "{method}", "model_address": {int(model_address)}, '
                               f'"refused": {str(refused).lower()}}}', key="", seconds=0.0, cached=False,
                        status="refused" if refused else "done")
    except StoreUnavailable:
        pass
