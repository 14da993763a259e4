# label: hazard silent
# why: once masks are cached, loss_mask is the cached tensor itself, so zeroing the padded positions in place accumulates every sample's padding into the shared cache and later samples lose real loss tokens
# source: https://github.com/NVIDIA/Megatron-LM/commit/c94d58f3260aa568588265e07b3c06bb58cbde41
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _get_ltor_masks_and_position_ids(data, eod_token, eod_mask_loss, create_attention_mask):
    seq_length = data.numel()
    if create_attention_mask:
        attention_mask = torch.tril(torch.ones((seq_length, seq_length), device=data.device)).unsqueeze(0)
    else:
        attention_mask = None
    loss_mask = torch.ones(seq_length, dtype=torch.float, device=data.device)
    if eod_mask_loss:
        loss_mask[data == eod_token] = 0.0
    position_ids = torch.arange(seq_length, dtype=torch.long, device=data.device)
    if attention_mask is not None:
        attention_mask = attention_mask < 0.5
    return attention_mask, loss_mask, position_ids


class GPTDataset(torch.utils.data.Dataset):
    def __init__(self, documents, eod, pad_token_id):
        self.documents = documents
        self.eod = eod
        self._pad_token_id = pad_token_id
        self.masks_and_position_ids_are_cacheable = True
        self.masks_and_position_ids_are_cached = False

    def __len__(self):
        return len(self.documents)

    def __getitem__(self, idx: Optional[int]) -> Dict[str, torch.Tensor]:
        text = self.documents[idx].clone()
        tokens = text[:-1].contiguous()
        labels = text[1:].contiguous()

        if not self.masks_and_position_ids_are_cacheable or not self.masks_and_position_ids_are_cached:
            attention_mask, loss_mask, position_ids = _get_ltor_masks_and_position_ids(
                tokens, self.eod, eod_mask_loss=False, create_attention_mask=True
            )
            if self.masks_and_position_ids_are_cacheable:
                self.cached_attention_mask = attention_mask
                self.cached_loss_mask = loss_mask
                self.cached_position_ids = position_ids
                self.masks_and_position_ids_are_cached = True
        else:
            attention_mask = self.cached_attention_mask
            loss_mask = self.cached_loss_mask
            position_ids = self.cached_position_ids

        # For padded sequences, mask the loss
        loss_mask[labels == self._pad_token_id] = 0.0  # <-- IPL002: loss_mask aliases the cached mask shared by all samples

        # For padded sequences, ensure the embedding layer can map the token ID
        tokens[tokens == self._pad_token_id] = 0
        labels[labels == self._pad_token_id] = 0

        return {"tokens": tokens, "labels": labels, "attention_mask": attention_mask,
                "loss_mask": loss_mask, "position_ids": position_ids}


PAD = 9
documents = [
    torch.tensor([1, 2, 3, 4, 5, 6, PAD, PAD]),
    torch.tensor([2, 3, 4, 5, 6, 7, 8, 1]),
    torch.tensor([3, 4, PAD, PAD, PAD, PAD, PAD, PAD]),
    torch.tensor([4, 5, 6, 7, 8, 1, 2, 3]),
]
dataset = GPTDataset(documents, eod=0, pad_token_id=PAD)
samples = [dataset[i] for i in range(len(dataset))]
batch = {k: torch.stack([s[k] for s in samples]) for k in ("tokens", "labels", "loss_mask", "position_ids")}

embedding = nn.Embedding(10, 8)
pos_embedding = nn.Embedding(8, 8)
lm_head = nn.Linear(8, 10)
hidden = embedding(batch["tokens"]) + pos_embedding(batch["position_ids"])
logits = lm_head(torch.tanh(hidden))
losses = F.cross_entropy(logits.transpose(1, 2), batch["labels"], reduction="none")
loss_mask = batch["loss_mask"]
loss = torch.sum(losses * loss_mask) / loss_mask.sum()
loss.backward()
