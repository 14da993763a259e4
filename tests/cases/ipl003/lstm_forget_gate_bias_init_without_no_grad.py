# label: hazard raises
# why: the forget-gate slice of the LSTM bias parameter is filled in place in __init__ outside torch.no_grad(), an in-place write to a view of a leaf that requires grad.
import torch
import torch.nn as nn


class LSTMTagger(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_size, num_tags):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, num_tags)
        self.reset_parameters()

    def reset_parameters(self):
        h = self.lstm.hidden_size
        for name, param in self.lstm.named_parameters():
            if name.startswith("bias"):
                # gate order is (input, forget, cell, output): bias the forget gate open
                param[h:2 * h].fill_(1.0)  # <-- IPL003

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out)


torch.manual_seed(0)
model = LSTMTagger(vocab_size=10, embed_dim=4, hidden_size=5, num_tags=3)
tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
tags = torch.tensor([[0, 1, 2], [2, 1, 0]])
out = model(tokens)
loss = nn.functional.cross_entropy(out.reshape(-1, 3), tags.reshape(-1))
loss.backward()
