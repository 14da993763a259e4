# label: safe no-twin
# why: the value model clones the last hidden states before the value head, so the tensor the head saves for backward is private and the backbone's later in-place reuse of its activation buffer cannot touch it.
# source: https://github.com/unslothai/unsloth/commit/093740a33f77e121f2524c4c4f15545fc27da7e6
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FastBackbone(nn.Module):
    """Stand-in for a patched fast-path decoder that recycles its activation buffers."""

    def __init__(self, vocab_size=32, hidden_size=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.SiLU(), nn.Linear(hidden_size, hidden_size))
        self.norm = nn.LayerNorm(hidden_size)
        self._hidden_buffer = None

    def forward(self, input_ids, attention_mask=None, output_hidden_states=True, return_dict=True):
        h = self.embed_tokens(input_ids)
        h = h + self.mlp(h)
        h = self.norm(h)
        if self._hidden_buffer is None or self._hidden_buffer.shape != h.shape:
            self._hidden_buffer = torch.zeros_like(h)
        self._hidden_buffer.copy_(h)
        return SimpleNamespace(hidden_states=(h, self._hidden_buffer))


class PolicyModel(nn.Module):
    def __init__(self, backbone, vocab_size=32):
        super().__init__()
        self.backbone = backbone
        self.lm_head = nn.Linear(backbone.norm.normalized_shape[0], vocab_size, bias=False)

    def forward(self, input_ids, attention_mask=None):
        outputs = self.backbone(input_ids, attention_mask=attention_mask)
        return self.lm_head(outputs.hidden_states[-1])


class SAOValueModel(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.value_head = nn.Linear(backbone.norm.normalized_shape[0], 1)

    def forward(self, input_ids, attention_mask=None, **kwargs):
        outputs = self.backbone(
            input_ids,
            attention_mask=attention_mask,
            output_hidden_states=True,
            return_dict=True,
            **kwargs,
        )
        hidden_states = outputs.hidden_states[-1].clone()
        return self.value_head(hidden_states.to(self.value_head.weight.dtype)).squeeze(-1)


def training_step(policy, value_model, input_ids, returns):
    values = value_model(input_ids)
    with torch.no_grad():
        logprobs = F.log_softmax(policy(input_ids), dim=-1)
    advantages = returns - values.detach()
    value_loss = 0.5 * (values - returns).pow(2).mean()
    value_loss.backward()
    return value_loss.detach(), advantages, logprobs


def main():
    backbone = FastBackbone()
    policy = PolicyModel(backbone)
    value_model = SAOValueModel(backbone)
    input_ids = torch.randint(0, 32, (2, 6))
    returns = torch.randn(2, 6)
    value_loss, advantages, _ = training_step(policy, value_model, input_ids, returns)
    return value_loss, value_model.value_head.weight.grad


value_loss, value_head_grad = main()
