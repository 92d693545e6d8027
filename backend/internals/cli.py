"""`python -m backend inspect lens|dla|attention|head|graph|node|heads|grid|attribute|patch|ablate|steer ... --json`."""
from __future__ import annotations

import argparse
import sys

from backend.cli.params import add_flags, flag_values
from backend.internals import cli_intervene
from backend.internals.config import AttentionConfig, AttributeConfig, DlaConfig, HeadConfig, LensConfig
from backend.internals.graph_config import GraphConfig, GridConfig, HeadScoresConfig, NodeConfig
from backend.internals.verbs import (ablate, attention, attribute, dla, graph, grid, head, head_scores, lens, node, patch,
                                   steer)
from backend.models import default_model_id, load


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def _run(args: argparse.Namespace, config_cls: type, verb):
    config = config_cls(**flag_values(args, config_cls, FLAGS[config_cls]))  # ranges checked before the model loads
    handle = load(args.model or default_model_id(), progress=_progress)
    computed = verb(handle, config, progress=_progress)
    return handle, computed


def cmd_lens(args: argparse.Namespace):
    handle, computed = _run(args, LensConfig, lens)
    result = computed.value
    if args.json:
        return {"model": handle.id, **result.to_json(), "provenance": computed.provenance, "run_id": computed.run_id}
    p = result.position
    return [{"layer": layer, "top-1 at position": result.top_tokens[layer][p][0],
             "prob": f"{result.top_probs[layer, p, 0]:.3f}",
             f"p({result.predicted_token})": f"{result.predicted_prob[layer]:.3f}",
             "rank": int(result.predicted_rank[layer])} for layer in range(result.n_layers + 1)]


def cmd_dla(args: argparse.Namespace):
    handle, computed = _run(args, DlaConfig, dla)
    result = computed.value
    if args.json:
        return {"model": handle.id, **result.to_json(), "provenance": computed.provenance, "run_id": computed.run_id}
    n_heads = result.heads.shape[1]
    order = (-result.heads).ravel().argsort()
    ranked = [(float(result.heads.flat[i]), f"L{i // n_heads}H{i % n_heads}") for i in order]
    return {"target": result.target_token, "contrast": result.contrast_token or "-", "logit": f"{result.logit:.4f}",
            "sum of parts": f"{result.total:.4f}", "embed": f"{result.embed:.4f}", "biases": f"{result.biases:.4f}",
            "top heads": ", ".join(f"{name} {v:+.3f}" for v, name in ranked[:5]),
            "MLPs": ", ".join(f"{v:+.3f}" for v in result.mlps)}


def cmd_attention(args: argparse.Namespace):
    handle, computed = _run(args, AttentionConfig, attention)
    if args.json:
        return {"model": handle.id, **computed.value.to_json(), "provenance": computed.provenance}
    result = computed.value
    return [{"query": q, "token": result.tokens[q], "most attended": result.tokens[int(row.argmax())],
             "weight": f"{row.max():.3f}"} for q, row in enumerate(result.pattern)]


def cmd_head(args: argparse.Namespace):
    handle, computed = _run(args, HeadConfig, head)
    if args.json:
        return {"model": handle.id, **computed.value.to_json(), "provenance": computed.provenance}
    result = computed.value
    return {"head": f"L{result.layer}H{result.head} at position {result.position} ({result.tokens[result.position]})",
            "promoted": ", ".join(f"{e.token!r} {e.logit:+.3f}" for e in result.promoted),
            "suppressed": ", ".join(f"{e.token!r} {e.logit:+.3f}" for e in result.suppressed)}


def _as_json(handle, computed) -> dict:
    return {"model": handle.id, **computed.value.to_json(), "provenance": computed.provenance}


def cmd_graph(args: argparse.Namespace):
    handle, computed = _run(args, GraphConfig, graph)
    if args.json:
        return _as_json(handle, computed)
    result = computed.value
    name = lambda n: f"{n.stage}{n.layer}@{n.position}"  # noqa: E731
    return [{"from": name(e.source), "to": name(e.target), "kind": e.kind if e.head is None else f"{e.kind} H{e.head}",
             "token": result.tokens[e.source.position], "weight": f"{e.weight:.3f}"} for e in result.edges]


def cmd_node(args: argparse.Namespace):
    handle, computed = _run(args, NodeConfig, node)
    if args.json:
        return _as_json(handle, computed)
    result = computed.value
    return {"state": f"{result.stage} {result.layer} at position {result.position} "
                     f"({result.tokens[result.position]!r})",
            "lens": ", ".join(f"{e.token!r} {e.logit:.3f}" for e in result.lens),
            "promoted": ", ".join(f"{e.token!r} {e.logit:+.3f}" for e in result.promoted) or "-",
            "suppressed": ", ".join(f"{e.token!r} {e.logit:+.3f}" for e in result.suppressed) or "-"}


def cmd_heads(args: argparse.Namespace):
    handle, computed = _run(args, HeadScoresConfig, head_scores)
    if args.json:
        return _as_json(handle, computed)
    scores = computed.value.scores
    return [{"layer": layer, **{f"H{h}": f"{v:.3f}" for h, v in enumerate(row)}} for layer, row in enumerate(scores)]


def cmd_grid(args: argparse.Namespace):
    handle, computed = _run(args, GridConfig, grid)
    if args.json:
        return _as_json(handle, computed)
    result = computed.value
    return [{"head": f"L{layer}H{h}", "most attended from the last token": result.tokens[int(p[-1].argmax())],
             "weight": f"{p[-1].max():.3f}"} for (layer, h), p in zip(result.heads, result.patterns)]


def cmd_attribute(args: argparse.Namespace):
    handle, computed = _run(args, AttributeConfig, attribute)
    result = computed.value
    if args.json:
        return {"model": handle.id, **result.to_json(), "provenance": computed.provenance}
    rows = []
    for i, target in enumerate(result.targets):
        seen = result.scores[i, :result.n_prompt + i]
        order = (-abs(seen)).argsort()[:5]
        rows.append({"target": repr(target), f"f = {result.function}": f"{result.f_input[i]:.4f}",
                     "largest attributions": ", ".join(f"{result.tokens[j]!r} {seen[j]:+.4f}" for j in order),
                     "delta": "-" if result.deltas is None else f"{result.deltas[i]:+.2e}"})
    return rows


FLAGS = {LensConfig: ("prompt", "position", "top_k", "track"),
         DlaConfig: ("prompt", "position", "target", "contrast"),
         AttentionConfig: ("prompt", "layer", "head"), HeadConfig: ("prompt", "layer", "head", "position", "top_k"),
         GraphConfig: ("prompt", "position", "threshold", "per_head"),
         NodeConfig: ("prompt", "layer", "position", "stage", "top_k"),
         HeadScoresConfig: ("prompt", "score", "repeat", "seed"),
         GridConfig: ("prompt", "layer", "score", "top_k", "repeat", "seed"),
         AttributeConfig: ("prompt", "target", "generate", "method", "function", "steps")}
VERBS = {"lens": (LensConfig, cmd_lens, "logit lens: each layer's residual read out as the model's output"),
         "dla": (DlaConfig, cmd_dla, "direct logit attribution of one token to every head and MLP"),
         "attention": (AttentionConfig, cmd_attention, "attention pattern of one head"),
         "head": (HeadConfig, cmd_head, "one head: its pattern and the tokens its output promotes and suppresses"),
         "graph": (GraphConfig, cmd_graph, "contribution graph (information flow routes) into one position"),
         "node": (NodeConfig, cmd_node, "one residual state: its logit lens and what the block before it wrote"),
         "heads": (HeadScoresConfig, cmd_heads, "every head scored: previous-token, duplicate, induction, sink"),
         "grid": (GridConfig, cmd_grid, "every head's attention pattern of one layer"),
         "attribute": (AttributeConfig, cmd_attribute, "input attribution (captum): which prompt tokens an output "
                       "token came from")}


def _intervention(config_cls, verb, table):
    def handler(args: argparse.Namespace):
        handle, computed = _run(args, config_cls, verb)
        if args.json:
            return {"model": handle.id, **computed.value.to_json(), "provenance": computed.provenance,
                    "run_id": computed.run_id}
        return table(computed.value)
    return handler


FLAGS.update(cli_intervene.FLAGS)
for _name, (_cls, _table, _text) in cli_intervene.VERBS.items():
    VERBS[_name] = (_cls, _intervention(_cls, {"patch": patch, "ablate": ablate, "steer": steer}[_name], _table), _text)


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("inspect", help="look inside the model on a prompt: contribution graph, logit "
                                   "lens, DLA, attention, input attribution; patch, ablate, steer")
    actions = parser.add_subparsers(dest="action", required=True)
    for name, (config_cls, handler, text) in VERBS.items():
        sub = actions.add_parser(name, help=text)
        sub.add_argument("--model", help="registry id (default: the configured default model)")
        add_flags(sub, config_cls, FLAGS[config_cls])
        sub.set_defaults(handler=handler)
