"""Inspect: the contribution graph's strongest attention edges into the last position against DLA's top heads."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table


def inspect_graph(ctx: Ctx) -> Body:
    r = ctx.load("inspect_graph_dla.json")
    lines = [f"`inspect graph --per-head` (information flow routes, threshold {r['threshold']:g}) against `inspect dla` "
             f"on {r['model']} for “{r['prompt']}” ({r['graph']['states']} states, {r['graph']['edges']} edges). "
             "The strongest attention edges into the last position, each head's rank by direct effect on the "
             "predicted token's logit (1 = largest of all heads):", ""]
    for name, title in (("dla", "logit"), ("dla_vs_john", "logit difference against ' John'")):
        d = r[name]
        lines += [f"DLA of {d['target']!r}" + (f" − {d['contrast']!r}" if d["contrast"] else "") + f" ({title}); "
                  f"top {len(d['top_heads'])} heads: " + ", ".join(f"{h['head']} {h['effect']:+.2f}"
                                                                  for h in d["top_heads"]) + ".", ""]
        lines += table(["edge (head)", "from token", "share of the state", "DLA rank"],
                       [[e["head"], repr(e["source"]), f"{e['share']:.3f}", e["dla_rank"]]
                        for e in d["graph_edges_into_last"]])
        lines += [f"{d['overlap_of_top']} of the graph's top {len(d['graph_edges_into_last'])} edges are heads in "
                  f"DLA's top {len(d['top_heads'])}. DLA's top heads' total share of the last position's attention "
                  "(over all sources): " + ", ".join(f"{k} {v:.3f}" for k, v in d["dla_top_heads_graph_share"].items())
                  + ".", ""]
    s = r["seconds"]
    lines += ["The graph measures what each term adds to the residual state it enters, DLA what a head adds to the "
              "output logit: an edge can be strong with no direct effect on the answer (a head building an early "
              "state), and a head whose write is spread over several sources can rank high in DLA with no single "
              "edge over the threshold.", "",
              f"Time in one process on this machine: graph per head {sec(s['graph_per_head'], 2)}, per source "
              f"{sec(s['graph_per_source'], 2)}, DLA {sec(s['dla'], 2)} (each graph call computes both decompositions; "
              f"load average {r.get('load_average', float('nan')):.1f} on {r.get('cpus', '?')} cores).", ""]
    return Body(lines, [r["command"]])


SECTIONS = [Section("Inspect: the contribution graph against DLA", ("inspect_graph_dla.json",), inspect_graph)]
