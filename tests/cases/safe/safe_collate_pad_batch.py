# label: safe
# why: a DataLoader collate_fn builds padded id/mask batches with new_full + slice assignment from raw samples; the model then trains on the resulting fresh tensors.
import torch
import torch.nn as nn


def collate_fn(samples, pad_idx=0, left_pad=False):
    max_len = max(s["ids"].numel() for s in samples)
    ids = samples[0]["ids"].new_full((len(samples), max_len), pad_idx)
    mask = torch.zeros(len(samples), max_len, dtype=torch.bool)
    labels = torch.empty(len(samples), dtype=torch.long)
    for i, s in enumerate(samples):
        n = s["ids"].numel()
        if left_pad:
            ids[i, max_len - n:] = s["ids"]
            mask[i, max_len - n:] = True
        else:
            ids[i, :n] = s["ids"]
            mask[i, :n] = True
        labels[i] = s["label"]
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


class BagClassifier(nn.Module):
    def __init__(self, vocab=20, dim=6, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.proj = nn.Linear(dim, classes)

    def forward(self, input_ids, attention_mask):
        h = self.embed(input_ids)
        m = attention_mask.unsqueeze(-1).float()
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.proj(pooled)


torch.manual_seed(0)
dataset = [
    {"ids": torch.tensor([3, 5, 7]), "label": 0},
    {"ids": torch.tensor([2, 9]), "label": 2},
    {"ids": torch.tensor([4, 4, 11, 12, 1]), "label": 1},
]
batch = collate_fn(dataset)
left = collate_fn(dataset, left_pad=True)
clf = BagClassifier()
logits = clf(batch["input_ids"], batch["attention_mask"])
logits_left = clf(left["input_ids"], left["attention_mask"])
loss = nn.functional.cross_entropy(logits, batch["labels"]) + (logits - logits_left).abs().sum()
loss.backward()
