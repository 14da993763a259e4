"""Check the verdict on transformers' Qwen2.5-Omni talker (bench/REAL_CODE.md): its public
forward writes the codec bos/pad embeddings into the caller's ``inputs_embeds``.

Needs transformers, which the project does not depend on; run it in a virtualenv of its own::

    python3 -m venv /tmp/tfvenv
    /tmp/tfvenv/bin/pip install torch==2.13.0 transformers==5.23.0
    /tmp/tfvenv/bin/python bench/verify/qwen2_5_omni_talker.py

It builds a tiny randomly initialised talker and prints how much one forward call changes the
embeddings it was given, how much a second call on the same tensor then differs, and what
torch says when the embeddings are a leaf that requires grad.
"""

from __future__ import annotations

import torch
from transformers import Qwen2_5OmniTalkerConfig
from transformers.models.qwen2_5_omni.modeling_qwen2_5_omni import (
    Qwen2_5OmniTalkerForConditionalGeneration,
)


def main() -> None:
    config = Qwen2_5OmniTalkerConfig(
        vocab_size=64,
        embedding_size=16,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        tts_codec_start_token_id=60,
        tts_codec_end_token_id=61,
        tts_codec_pad_token_id=62,
        tts_codec_mask_token_id=63,
        rope_scaling={"mrope_section": [1, 1, 2], "type": "default", "rope_type": "default"},
    )
    torch.manual_seed(0)
    model = Qwen2_5OmniTalkerForConditionalGeneration(config).eval()
    embeds = torch.randn(1, 5, 16)
    before = embeds.clone()
    ids = torch.randint(0, 50, (1, 5))
    mask = torch.ones(1, 5, dtype=torch.long)
    kwargs = {"input_ids": ids, "input_text_ids": ids, "attention_mask": mask, "use_cache": False}
    with torch.no_grad():
        first = model(inputs_embeds=embeds, **kwargs).logits
        second = model(inputs_embeds=embeds, **kwargs).logits
    print(f"caller's inputs_embeds changed by up to {(embeds - before).abs().max().item():.4f}")
    print(f"second call on the same tensor: logits differ by {(first - second).abs().max():.4f}")
    leaf = before.clone().requires_grad_()
    try:
        model(inputs_embeds=leaf, **kwargs)
        print("leaf inputs_embeds: no error")
    except RuntimeError as exc:
        print(f"leaf inputs_embeds: RuntimeError: {exc}")


if __name__ == "__main__":
    main()
