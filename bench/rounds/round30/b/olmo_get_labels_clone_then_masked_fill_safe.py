# label: safe
# why: Trainer.get_labels clones batch["input_ids"] before masking padding/label positions with masked_fill_, so the in-place fill only touches a private integer copy and the batch used for the forward pass is unchanged.
# source: https://github.com/allenai/OLMo/commit/437c838c98755642d1e30db2b129db3d2bebe2d3
from typing import Any, Dict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class OLMo(nn.Module):
    def __init__(self, vocab_size=32, d_model=16):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.block = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, d_model), nn.GELU())
        self.ff_out = nn.Linear(d_model, vocab_size)

    def forward(self, input_ids, attention_mask=None, attention_bias=None):
        x = self.wte(input_ids)
        x = x + self.block(x)
        if attention_mask is not None:
            x = x * attention_mask[..., None]
        return self.ff_out(x)


class Trainer:
    def __init__(self, model, optim):
        self.fsdp_model = model
        self.optim = optim

    def get_labels(self, batch: Dict[str, Any]) -> torch.Tensor:
        # Labels are just input IDs shifted to the left (first item is ignored).
        labels, label_mask, attention_mask = (
            batch["input_ids"].clone(),
            batch.get("label_mask"),
            batch.get("attention_mask"),
        )
        if label_mask is not None:
            labels.masked_fill_(~label_mask, -100)
        if attention_mask is not None:
            labels.masked_fill_(attention_mask == 0.0, -100)
        return labels[..., 1:].contiguous()

    def model_forward(self, batch: Dict[str, Any], loss_reduction: str = "mean"):
        logits = self.fsdp_model(input_ids=batch["input_ids"], attention_mask=batch.get("attention_mask"))
        logits_for_loss = logits[..., :-1, :].contiguous()
        logits_for_loss = logits_for_loss.view(-1, logits_for_loss.size(-1))
        labels = self.get_labels(batch)
        labels = labels.view(-1)
        ce_loss = F.cross_entropy(logits_for_loss, labels, ignore_index=-100, reduction=loss_reduction)
        return ce_loss, logits

    def train_batch(self, batch):
        self.optim.zero_grad()
        ce_loss, _ = self.model_forward(batch)
        ce_loss.backward()
        self.optim.step()
        return ce_loss.detach()


def main():
    model = OLMo()
    trainer = Trainer(model, torch.optim.AdamW(model.parameters(), lr=1e-2))
    batch = {
        "input_ids": torch.randint(1, 32, (2, 8)),
        "attention_mask": torch.tensor([[1.0] * 8, [1.0] * 5 + [0.0] * 3]),
        "label_mask": torch.tensor([[False] * 3 + [True] * 5, [True] * 8]),
    }
    losses = torch.stack([trainer.train_batch(batch) for _ in range(2)])
    return losses, batch["input_ids"], model.ff_out.weight.detach().clone()


losses, input_ids, ff_out_weight = main()
