# label: hazard silent
# why: the embeddings module adds position embeddings into the caller's inputs_embeds in place, and the caller reuses inputs_embeds afterwards for the tied-embedding auxiliary loss.
import torch
import torch.nn as nn


class TextEmbeddings(nn.Module):
    def __init__(self, max_positions, hidden_size, dropout=0.0):
        super().__init__()
        self.position_embeddings = nn.Embedding(max_positions, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, inputs_embeds, position_ids=None):
        seq_length = inputs_embeds.shape[1]
        if position_ids is None:
            position_ids = torch.arange(seq_length).unsqueeze(0)
        inputs_embeds += self.position_embeddings(position_ids)  # <-- IPL004
        return self.dropout(self.LayerNorm(inputs_embeds))


class TinyEncoder(nn.Module):
    def __init__(self, vocab_size=11, hidden_size=8, max_positions=16):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.embeddings = TextEmbeddings(max_positions, hidden_size)
        self.layer = nn.Linear(hidden_size, hidden_size)

    def forward(self, input_ids):
        inputs_embeds = self.word_embeddings(input_ids)
        hidden = torch.tanh(self.layer(self.embeddings(inputs_embeds)))
        # auxiliary reconstruction target uses the raw token embeddings
        aux = (hidden - inputs_embeds).pow(2).mean()
        return hidden, aux


torch.manual_seed(0)
model = TinyEncoder()
input_ids = torch.tensor([[1, 4, 7, 2], [3, 3, 9, 0]])
out, aux = model(input_ids)
loss = out.sum() + aux
loss.backward()
