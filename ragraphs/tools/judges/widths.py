"""Judges whose layers' feed-forwards differ in width.

A BERT config has one ``intermediate_size`` for every layer. A judge cut narrower for speed
(``bench/judges_ffn_prune.py``) may keep one layer whole, such as the last, which the exported
graph computes for the first position only, so its width costs about nothing. Such a model's
config also names each layer's width (``ffn_widths``); these helpers give the layers those
widths before the weights are loaded, so transformers' loaders, the ONNX export and
``restore_fp32`` read it like any other judge. A model without ``ffn_widths`` loads as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Mapping

from ...quiet import quiet_loading


def ffn_widths(model_dir: str | os.PathLike) -> list[int] | None:
    """The per-layer feed-forward widths the config in ``model_dir`` names, or None."""
    cfg = Path(model_dir) / "config.json"
    if not cfg.is_file():
        return None
    return json.loads(cfg.read_text(encoding="utf-8")).get("ffn_widths")


def fit_ffn_widths(model, state: Mapping) -> None:
    """Give each encoder layer of ``model`` (a transformers BERT model) the feed-forward width
    its weights have in ``state`` (a state dict under the model's own names); the layers whose
    width changes get new, uninitialised linear maps, for ``load_state_dict`` to fill."""
    import torch

    prefix = model.base_model_prefix
    widths = []
    for i, layer in enumerate(model.base_model.encoder.layer):
        key = f"{prefix}.encoder.layer.{i}.intermediate.dense.weight"
        if key not in state:
            raise ValueError(f"the weights name no {key}: not a BERT model of this depth")
        width = int(state[key].shape[0])
        widths.append(width)
        old_in, old_out = layer.intermediate.dense, layer.output.dense
        if width != old_in.out_features:
            like = {"dtype": old_in.weight.dtype, "device": old_in.weight.device}
            layer.intermediate.dense = torch.nn.Linear(old_in.in_features, width, **like)
            layer.output.dense = torch.nn.Linear(width, old_out.out_features, **like)
    if len(set(widths)) > 1:
        model.config.ffn_widths = widths
    elif hasattr(model.config, "ffn_widths"):
        del model.config.ffn_widths
    model.config.intermediate_size = widths[0]


def load_widths(model, model_dir: str | os.PathLike) -> None:
    """Fit ``model``'s layers to the weights saved in ``model_dir`` and load them (strict)."""
    from safetensors.torch import load_file

    state = load_file(str(Path(model_dir) / "model.safetensors"))
    dtype = next(model.parameters()).dtype
    state = {k: v.to(dtype) if v.is_floating_point() else v for k, v in state.items()}
    fit_ffn_widths(model, state)
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise ValueError(f"{model_dir}: weights do not match the model (missing {missing[:3]}, unexpected {unexpected[:3]})")


def load_classifier(model_dir: str | os.PathLike, **kwargs):
    """``AutoModelForSequenceClassification.from_pretrained(model_dir, **kwargs)``, also for a
    model whose layers' feed-forward widths differ (``ffn_widths`` in its config)."""
    from transformers import AutoModelForSequenceClassification

    if not ffn_widths(model_dir):
        return AutoModelForSequenceClassification.from_pretrained(str(model_dir), **kwargs)
    with quiet_loading():  # its report lists the layers fitted right after
        model = AutoModelForSequenceClassification.from_pretrained(str(model_dir), ignore_mismatched_sizes=True, **kwargs)
    load_widths(model, model_dir)
    return model


def load_cross_encoder(model_dir: str | os.PathLike, **kwargs):
    """A sentence-transformers ``CrossEncoder`` of ``model_dir``, also when its layers'
    feed-forward widths differ (``ffn_widths`` in its config)."""
    from sentence_transformers.cross_encoder import CrossEncoder

    if not ffn_widths(model_dir):
        return CrossEncoder(str(model_dir), **kwargs)
    model_kwargs = {**kwargs.pop("model_kwargs", {}), "ignore_mismatched_sizes": True}
    with quiet_loading():  # its report lists the layers fitted right after
        model = CrossEncoder(str(model_dir), model_kwargs=model_kwargs, **kwargs)
    load_widths(model.model, model_dir)
    return model
