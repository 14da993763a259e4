# label: hazard silent
# why: on the first (cache-filling) sample GPTDataset stores the loss_mask tensor itself in self.cached_loss_mask and then zeroes padded positions in place, so the cache is corrupted and every later sample silently inherits the first sample's padding mask.
# source: https://github.com/NVIDIA/Megatron-LM/pull/6981
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _get_ltor_masks_and_position_ids(data, eod_token, reset_position_ids, reset_attention_mask, eod_mask_loss):
    seq_length = data.numel()
    attention_mask = torch.tril(torch.ones((seq_length, seq_length))).unsqueeze(0)
    loss_mask = torch.ones(seq_length, dtype=torch.float)
    if eod_mask_loss:
        loss_mask[data == eod_token] = 0.0
    position_ids = torch.arange(seq_length, dtype=torch.long)
    attention_mask = attention_mask < 0.5
    return attention_mask, loss_mask, position_ids


class GPTDataset:
    def __init__(self, samples, pad_token_id=0, eod_token=1):
        self.samples = samples
        self._pad_token_id = pad_token_id
        self._eod_token = eod_token
        self.masks_and_position_ids_are_cacheable = True
        self.masks_and_position_ids_are_cached = False

    def __getitem__(self, idx):
        text = self.samples[idx]
        tokens = text[:-1].contiguous()
        labels = text[1:].contiguous()
        if not self.masks_and_position_ids_are_cacheable or not self.masks_and_position_ids_are_cached:
            attention_mask, loss_mask, position_ids = _get_ltor_masks_and_position_ids(
                tokens, self._eod_token, False, False, False
            )
            if self.masks_and_position_ids_are_cacheable:
                self.cached_attention_mask = attention_mask
                self.cached_loss_mask = loss_mask
                self.cached_position_ids = position_ids
                self.masks_and_position_ids_are_cached = True
        else:
            attention_mask = self.cached_attention_mask
            loss_mask = self.cached_loss_mask.clone()
            position_ids = self.cached_position_ids

        # For padded sequences, mask the loss
        loss_mask[labels == self._pad_token_id] = 0.0  # <-- IPL002

        return {"tokens": tokens, "labels": labels, "attention_mask": attention_mask,
                "loss_mask": loss_mask, "position_ids": position_ids}


class TinyGPT(nn.Module):
    def __init__(self, vocab=11, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        return self.head(torch.tanh(self.embed(tokens)))


def loss_func(loss_mask, logits, labels):
    losses = F.cross_entropy(logits, labels, reduction="none")
    return torch.sum(losses * loss_mask) / loss_mask.sum()


def main():
    samples = [
        torch.tensor([5, 3, 7, 2, 0, 0, 0]),  # first sample is padded at the end
        torch.tensor([4, 9, 3, 6, 8, 2, 7]),  # second sample is full length
        torch.tensor([2, 2, 5, 9, 4, 3, 0]),
    ]
    dataset = GPTDataset(samples)
    model = TinyGPT()
    total = 0.0
    masks = []
    for idx in range(len(samples)):
        batch = dataset[idx]
        logits = model(batch["tokens"])
        total = total + loss_func(batch["loss_mask"], logits, batch["labels"])
        masks.append(batch["loss_mask"])
    total.backward()
    return torch.stack(masks), total.detach(), model.head.weight.grad


masks, total, head_grad = main()
