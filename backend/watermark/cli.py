"""`python -m backend watermark identity|embed|generate|detect|attack|evaluate ... --json`."""
from __future__ import annotations

import sys
from pathlib import Path

from backend.cli.params import add_flags, flag_values, int_list
from backend.errors import UserError
from backend.watermark.hf_kgw.config import HFKGWConfig
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.methods import METHODS, TOO_SHORT, DetectRequest, detect
from backend.watermark.synthid.config import SynthIDConfig

SAMPLING_FLAGS = {"max_sentences": "--sentences", "temperature": "--temperature", "seed": "--seed",
                  "precision": "--precision"}
HF_KGW_FLAGS = {"greenlist_ratio": "--greenlist-ratio", "bias": "--bias", "hashing_key": "--hashing-key",
                "seeding_scheme": "--seeding-scheme", "context_width": "--context-width"}
SYNTHID_FLAGS = {"ngram_len": "--ngram-len"}
CLI_VERDICTS = {TOO_SHORT: "too short"}  # the JSON's verdict words: watermarked, not watermarked, too short


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def _text(args) -> str:
    from backend.unicode_text import visible
    from backend.watermark.uploads import MAX_BYTES, MAX_CHARS, read_upload

    if getattr(args, "file", None):
        path = Path(args.file)
        if not path.is_file():
            raise UserError(f"--file: no such file: {visible(path)}")
        try:  # the size first: a file over the cap is refused without being read
            size = path.stat().st_size
            if size > MAX_BYTES:
                raise UserError(f"The file is {size / 1e6:.1f} MB; the limit is {MAX_BYTES / 1e6:.0f} MB.")
            return read_upload(path.name, path.read_bytes())
        except UserError as err:  # the message names the field and the file, hidden characters written out
            raise UserError(f"--file {visible(path.name)}: {err}") from None
    if getattr(args, "text", None) is not None:
        return args.text
    return sys.stdin.read(MAX_CHARS + 1)  # one past the limit: detection refuses it without reading the rest


def _add_setting_flags(parser) -> None:
    """The settings of the methods whose keys are settings, not identities (hf-kgw, synthid)."""
    add_flags(parser, HFKGWConfig, HF_KGW_FLAGS)
    parser.add_argument("--synthid-keys", metavar="INT,INT,...",
                        help="synthid: comma-separated whole-number keys (default: "
                             f"{','.join(map(str, SynthIDConfig().keys))})")
    add_flags(parser, SynthIDConfig, SYNTHID_FLAGS)


def _settings(args) -> dict:
    """Method name -> its config from the flags (a bad value: a UserError naming the flag or field)."""
    keys = {} if args.synthid_keys is None else {"keys": int_list(args.synthid_keys, "--synthid-keys")}
    return {"hf-kgw": HFKGWConfig(**flag_values(args, HFKGWConfig, HF_KGW_FLAGS)),
            "synthid": SynthIDConfig(**keys, **flag_values(args, SynthIDConfig, SYNTHID_FLAGS))}


def _cli_json(row: dict) -> dict:
    return {**row, "verdict": CLI_VERDICTS.get(row["verdict"], row["verdict"])}


def cmd_identity(args) -> dict | list:
    import backend.watermark.identities as identities

    if args.identity_action == "add-model":
        return identities.add_model(args.name, args.address).__dict__
    if args.identity_action == "add-user":
        user = identities.add_user(args.model, args.label, args.address)
        return {**user.__dict__, "address": user.full_address}
    if args.identity_action == "add-demo":  # what the page adds on a fresh registry for its local user only
        from backend.watermark import demo

        return demo.add_demo().__dict__
    if args.identity_action == "bulk-users":
        return {"model": args.model, "added": identities.bulk_add_users(args.model, args.count, args.prefix)}
    if args.model is not None:
        return identities.users_frame(args.model, args.limit).astype({"created": str}).to_dict(orient="records")
    return identities.summary_frame().to_dict(orient="records")


def _handle(args):
    from backend.models import default_model_id, load

    return load(args.model_id or default_model_id(), progress=_progress)


def cmd_generate(args) -> dict:
    from backend.watermark.generation import generate, make_request
    from backend.watermark.sampling import SamplingConfig

    from backend.watermark import demo

    needs_identity = not (METHODS.get(args.method).is_baseline or METHODS.get(args.method).identity_free)
    if args.identity is None and needs_identity:  # the first try works as the page's does: on the demo identity
        model_address, user_address = demo.first_try_identity()
        print(f"identity: {model_address}.{user_address} ({demo.DEMO_LABEL}: keys from the public demo secret, so "
              "anyone can write this mark; name your own with --identity MODEL.USER)", file=sys.stderr)
    else:
        model_address, user_address = _identity(args.identity)
    handle = _handle(args)
    sampling_flags = flag_values(args, SamplingConfig, SAMPLING_FLAGS)
    if sampling_flags.get("max_sentences") is None:  # the length at which the method's own detector flags it
        sampling_flags["max_sentences"] = METHODS.get(args.method).sentences_to_flag
    sampling = SamplingConfig(**sampling_flags)
    request = make_request(args.prompt, args.method, model_address, user_address, sampling,
                           IPMarkConfig(n_candidates=args.n_candidates), *_settings(args).values())
    show = None if args.json else (lambda p: print(f"[{p.latest.level or '-'} tier {p.latest.tier}] {p.latest.text}",
                                                   file=sys.stderr))
    done = generate(handle, request, on_partial=show, progress=_progress)
    g = done.value
    if g.context_note():  # the context rule ended the text early: said, not silent
        print(g.context_note(), file=sys.stderr)
    method = METHODS.get(args.method)
    identity = None if not needs_identity else (f"{model_address}.{user_address}" if method.identifies_users
                                                else str(model_address))
    return {"model": handle.display_name, "method": g.method, "identity": identity,
            "demo": needs_identity and demo.is_demo(model_address), "text": g.text,
            "sentences": [s.__dict__ for s in g.sentences], "context_full": g.context_full,
            "provenance": done.provenance, "run_id": done.run_id}


def _identity(text: str | None) -> tuple[int, int]:
    if not text:
        return 0, 0
    parts = text.split(".")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        raise UserError(f"An identity looks like MODEL or MODEL.USER (numbers), not {text!r}.") from None
    if len(numbers) > 2:
        raise UserError(f"An identity looks like MODEL or MODEL.USER, not {text!r}.")
    return numbers[0], numbers[1] if len(numbers) > 1 else 0


def cmd_detect(args) -> dict | list:
    """One method's detection (--method), or one row per method that can judge the text (a list)."""
    from backend.watermark.verdicts import verdict_table

    text = _text(args)
    if not text.strip():
        raise UserError("text: the text to check is empty (--text, --file or standard input).")
    settings = _settings(args)
    model_address, user_address = _identity(args.identity)
    if args.method is None:
        table = verdict_table(text, _handle(args), prompt=args.prompt, model_address=model_address,
                              configs=settings)
        return [_cli_json(row.to_json()) for row in table.rows]
    method = METHODS.get(args.method)
    if method.needs_identity_to_detect and not model_address:
        raise UserError(f"{method.name} detection needs --identity MODEL (the model address whose key to test).")
    handle = _handle(args) if method.needs_model_to_detect else None
    request = DetectRequest(**flag_values(args, DetectRequest, ("method", "search")), prompt=args.prompt,
                            model_address=model_address, user_address=user_address, handle=handle,
                            config=settings.get(method.name))
    found = detect(text, request)
    scored = getattr(found.report, "n_tokens", None)
    return _cli_json({**found.to_json(), "score": found.score, "tokens_scored": scored})


def cmd_attack(args) -> dict:
    from backend.watermark.attacks import ATTACKS, AttackContext, apply_attack, changed_share

    if args.attack == "list":
        return {a.name: a.help for a in ATTACKS}
    paraphrase = None
    if args.attack in ATTACKS and ATTACKS.get(args.attack).needs_model:
        from backend.watermark.paraphrase import paraphraser

        paraphrase = paraphraser(_handle(args))
    other = Path(args.other).read_text(encoding="utf-8") if args.other else ""
    text = _text(args)
    attacked = apply_attack(args.attack, text, args.rate, AttackContext(args.seed, other, paraphrase))
    return {"attack": args.attack, "rate": args.rate, "text": attacked, "changed": round(changed_share(text, attacked), 4)}


def cmd_evaluate(args) -> dict:
    from backend.watermark.evaluation import EvalConfig, evaluate
    from backend.watermark.sampling import SamplingConfig

    cfg = EvalConfig(**flag_values(args, EvalConfig, ("n_prompts", "n_users")),
                     sampling=SamplingConfig(max_sentences=args.max_sentences))
    done = evaluate(_handle(args), cfg, progress=_progress)
    v = done.value
    return {"model": v.model_name, "provenance": done.provenance, "run_id": done.run_id,
            "quality": [q.__dict__ for q in v.quality], "detection": [d.__dict__ for d in v.detection],
            "attribution": [a.__dict__ for a in v.attribution]}


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("watermark", help="IPMark / KGW watermarks: identities, generate, detect, "
                                                     "attack, evaluate")
    actions = parser.add_subparsers(dest="action", required=True)

    ident = actions.add_parser("identity", help="add or list model/user identities")
    ident.add_argument("identity_action", choices=("list", "add-model", "add-user", "bulk-users",
                                                           "add-demo"))
    ident.add_argument("--name", default="", help="model name (add-model)")
    ident.add_argument("--label", default="", help="user label (add-user)")
    ident.add_argument("--model", type=int, help="model address (add-user, bulk-users; list: its users)")
    ident.add_argument("--address", type=int, help="explicit address (default: next free)")
    ident.add_argument("--count", type=int, default=100, help="bulk-users: how many")
    ident.add_argument("--prefix", default="user", help="bulk-users: label prefix")
    ident.add_argument("--limit", type=int, default=1000)
    ident.set_defaults(handler=cmd_identity)

    from backend.watermark.evaluation import EvalConfig
    from backend.watermark.generation import GenerateRequest
    from backend.watermark.sampling import SamplingConfig

    # One verb per meaning: "embed" stays as an alias of "generate" for earlier command lines.
    gen = actions.add_parser("generate", aliases=["embed"], help="generate text with a watermark")
    gen.add_argument("prompt")
    add_flags(gen, GenerateRequest, {"method": "--method"})
    gen.add_argument("--identity", help="MODEL.USER for ipmark, MODEL for kgw")
    gen.add_argument("--model-id", help="language model (default: the configured default)")
    add_flags(gen, SamplingConfig, SAMPLING_FLAGS, max_sentences={
        "default": None, "help": "sentences to generate (default: the method's first-try length, at which its own "
                                 "detector flags the text: " + ", ".join(f"{m.name} {m.sentences_to_flag}" for m in
                                                                           METHODS if not m.is_baseline) + ")"})
    add_flags(gen, IPMarkConfig, {"n_candidates": "--candidates"})
    _add_setting_flags(gen)
    gen.set_defaults(handler=cmd_generate)

    det = actions.add_parser("detect", help="detect and attribute a watermark in text")
    det.add_argument("--text", help="the text (default: --file or standard input)")
    det.add_argument("--file", help=".txt, .md, .pdf or .docx")
    det.add_argument("--prompt", help="prompt to strip from the text")
    add_flags(det, DetectRequest, ["method", "search"],
              method={"default": None, "help": "watermark method to test for (default: every method that can "
                                               "judge the text, one JSON object each, in a list)"})
    det.add_argument("--identity", help="kgw: MODEL address to test")
    det.add_argument("--model-id", help="kgw, hf-kgw, synthid: language model whose tokenizer to use "
                                        "(default: the embedded model)")
    _add_setting_flags(det)
    det.set_defaults(handler=cmd_detect)

    att = actions.add_parser("attack", help="apply an attack to text ('list' lists them)")
    att.add_argument("attack")
    att.add_argument("--text")
    att.add_argument("--file")
    att.add_argument("--rate", type=float)
    att.add_argument("--seed", type=int, default=0)
    att.add_argument("--other", help="copy_paste: file with the unwatermarked text to mix in")
    att.add_argument("--model-id")
    att.set_defaults(handler=cmd_attack)

    ev = actions.add_parser("evaluate", help="quality, robustness and attribution of every method (cached)")
    add_flags(ev, EvalConfig, {"n_prompts": "--prompts", "n_users": "--users"})
    add_flags(ev, SamplingConfig, {"max_sentences": "--sentences"})
    ev.add_argument("--model-id")
    ev.set_defaults(handler=cmd_evaluate)

    from backend.watermark.scan_cli import add_scan_command

    add_scan_command(actions)
