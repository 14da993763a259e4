# label: safe
# why: add_positional uses `tokens = tokens + table[...]`, so the caller's embeddings stay position-free for the bag-of-words auxiliary head.
import torch
import torch.nn as nn

torch.manual_seed(0)

vocab, dim, max_len = 50, 12, 16
embed = nn.Embedding(vocab, dim)
pos_table = nn.Parameter(torch.randn(max_len, dim) * 0.5)
encoder = nn.TransformerEncoderLayer(dim, 2, 24, dropout=0.0, batch_first=True)
aux_head = nn.Linear(dim, 2)
cls_head = nn.Linear(dim, 2)


def add_positional(tokens, table):
    tokens = tokens + table[: tokens.shape[1]]
    return tokens


ids = torch.randint(0, vocab, (3, 7))
tok = embed(ids)
enc = encoder(add_positional(tok, pos_table))
cls_logits = cls_head(enc[:, 0])
bow_logits = aux_head(tok.mean(dim=1))
loss = cls_logits.pow(2).mean() + bow_logits.pow(2).mean()
loss.backward()
