# label: hazard raises
# why: an in-place Dropout right after nn.Tanh overwrites the tanh output that Tanh saved for backward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Sequential(nn.Linear(dim, 32), nn.Tanh(), nn.Dropout(p=0.3, inplace=True), nn.Linear(32, classes))  # <-- IPL001

    def forward(self, token_ids, offsets):
        return self.head(self.embed(token_ids, offsets))


model = TextClassifier(50, 12, 3)
token_ids = torch.randint(0, 50, (20,))
offsets = torch.tensor([0, 7, 12])
labels = torch.tensor([0, 2, 1])
logits = model(token_ids, offsets)
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
