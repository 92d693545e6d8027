"""Each page's first view says what it found, in one sentence computed from the result on screen. When the result
shown does not bear out the paper's claim the page reproduces, the sentence says that instead. Pure functions of
backend results (no Streamlit), so the words are tested like the figures."""
from __future__ import annotations

import numpy as np

EARLY = 1 / 3  # "early" = in the first third of the rollout
CONCENTRATED = 0.5  # "concentrated" = the top tenth of the positions carries at least half of the divergence


def disagreement_finding(rollout, signal: str, signal_label: str, top_n: int) -> str:
    """Where the largest disagreements of one rollout sit: how much of the total the top tenth of positions
    carries, and how early the top `top_n` are (Home's claim: on few early planning tokens)."""
    values = np.nan_to_num(np.asarray(rollout.signals[signal], dtype=float).clip(min=0))
    n = len(values)
    if n == 0 or values.sum() <= 0:
        return f"The two models agree everywhere on this rollout ({signal_label} is zero at every position)."
    tenth = max(1, int(np.ceil(0.1 * n)))
    mass = float(np.sort(values)[::-1][:tenth].sum() / values.sum())
    top = np.argsort(-values, kind="stable")[:min(top_n, n)]
    where = float(np.median(top)) / max(n - 1, 1)
    tokens = ", ".join(repr(rollout.tokens[i].strip() or rollout.tokens[i]) for i in sorted(top)[:5])
    shape = (f"the top {tenth} of {n} positions ({tenth / n:.0%}) carry {mass:.0%} of the total {signal_label}")
    place = f"the {len(top)} largest sit {'early' if where <= EARLY else 'later'} (median at {where:.0%} of the " \
            f"rollout: {tokens})"
    if mass >= CONCENTRATED and where <= EARLY:
        return f"Disagreement is concentrated and early here: {shape}; {place}."
    missing = [w for w, ok in (("concentrated", mass >= CONCENTRATED), ("early", where <= EARLY)) if not ok]
    return (f"This rollout does not show disagreement {' and '.join(missing)} as Home describes it: {shape}; "
            f"{place}.")


def nag_finding(precision: dict[int, float], relevant: int, pool_size: int, embedding: dict[int, float] | None,
                targets: str) -> str:
    """NAG's precision@k on the labelled pool against random selection (its expectation, relevant / pool) and,
    when it is stored, the embedding baseline."""
    if not precision or pool_size == 0:
        return "The pool has no domain labels matching the targets, so precision cannot be measured here."
    k = min(precision)
    chance = relevant / pool_size
    text = (f"Among its top {k} documents NAG picks {precision[k]:.0%} from the target domain ({targets}), against "
            f"{chance:.0%} expected at random ({relevant} of {pool_size} documents)")
    if embedding and k in embedding:
        text += f" and {embedding[k]:.0%} for the embedding baseline"
    if precision[k] <= chance:
        return text + ": on this pool NAG does no better than chance."
    return text + "."


def fp8_finding(result) -> str:
    """The largest share of its bound that any observed attention logit used, and where; what that means for the
    scale taken from the bound."""
    observed = np.asarray(result.observed, dtype=float)
    if not np.isfinite(observed).any():
        return "No sample text was run, so the bounds are not compared with real logits here."
    share = observed / np.asarray(result.bound, dtype=float)
    layer, head = np.unravel_index(np.nanargmax(share), share.shape)
    peak = float(share[layer, head])
    if peak > 1:
        return (f"An observed logit exceeds its bound (layer {layer}, head {head}: {peak:.0%} of it): the bound is "
                "violated, which would be a bug.")
    headroom = float(np.log2(1 / peak)) if peak > 0 else float("inf")
    return (f"Per head, real logits reach at most {peak:.1%} of that head's guaranteed bound (layer {layer}, head "
            f"{head}; the utilisation above is per layer, against the layer's bound); no observed logit exceeds its "
            f"bound, and a scale taken from the head's bound would leave about {headroom:.1f} bits of the FP8 range "
            "unused there.")
