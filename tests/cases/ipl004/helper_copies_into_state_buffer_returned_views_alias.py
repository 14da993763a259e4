# label: hazard silent
# why: the step function copies fresh tokens into the caller's rolling buffer, but the caller keeps the views of that buffer it returned each step: the next step's copy overwrites them, so the concatenated tokens repeat the last step's (once labelled safe; the engine found it, and torch agrees)
import torch
import torch.nn as nn

torch.manual_seed(0)

codec = nn.Linear(4, 4)


def prepare_step_inputs(audio_tokens: torch.Tensor, frames: torch.Tensor, window: int):
    with torch.no_grad():
        fresh = codec(frames).argmax(-1, keepdim=True).expand(-1, window)
    n = min(audio_tokens.shape[1], fresh.shape[1])
    audio_tokens[:, :n].copy_(fresh[:, :n])  # <-- IPL004: the caller's earlier step tokens are views of this buffer
    return {"tokens": audio_tokens[:, -1:], "window": window}


def generate(prepare, state, steps):
    out = []
    for _ in range(steps):
        out.append(prepare(state, torch.randn(2, 4), 3)["tokens"])
    return torch.cat(out, dim=1)


buffer = torch.zeros(2, 3, dtype=torch.long)
inputs = {"tokens": generate(prepare_step_inputs, buffer, 2)}
last = inputs["tokens"].float()
