# label: hazard silent
# why: the muP embedding multiplier is applied with `embeddings.mul_(...)` inside torch.no_grad(), so the forward uses scaled embeddings but autograd never records the multiplication and the gradients reaching the word/position embeddings silently miss the factor.
# source: https://github.com/EleutherAI/gpt-neox/commit/66422913280ebb2048e7764d27b04470f8479005
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Embedding(torch.nn.Module):
    def __init__(self, neox_args, hidden_size, vocab_size, max_sequence_length, embedding_dropout_prob):
        super(Embedding, self).__init__()
        self.hidden_size = hidden_size
        self.use_mup = neox_args.use_mup
        self.mup_embedding_mult = neox_args.mup_embedding_mult
        self.mup_rp_embedding_mult = neox_args.mup_rp_embedding_mult
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.use_pos_emb = True
        self.embedding_type = "learned"
        self.position_embeddings = nn.Embedding(max_sequence_length, hidden_size)
        self.embedding_dropout = torch.nn.Dropout(embedding_dropout_prob)
        self.opt_pos_emb_offset = 0

    def forward(self, input_ids, position_ids, tokentype_ids=None):
        words_embeddings = self.word_embeddings(input_ids)
        if self.use_pos_emb and self.embedding_type in ["learned", "sinusoidal"]:
            position_embeddings = self.position_embeddings(position_ids)
            position_embeddings.mul_(self.mup_rp_embedding_mult)
            embeddings = words_embeddings + position_embeddings
        else:
            embeddings = words_embeddings

        embeddings = self.embedding_dropout(embeddings)

        if self.use_mup:
            with torch.no_grad():
                embeddings.mul_(self.mup_embedding_mult)  # <-- IPL007

        return embeddings


class TinyNeoX(nn.Module):
    def __init__(self, neox_args, vocab_size=40, hidden_size=16, seq_len=8):
        super().__init__()
        self.embedding = Embedding(neox_args, hidden_size, vocab_size, seq_len, embedding_dropout_prob=0.0)
        self.mlp = nn.Sequential(nn.LayerNorm(hidden_size), nn.Linear(hidden_size, 4 * hidden_size), nn.GELU(), nn.Linear(4 * hidden_size, hidden_size))
        self.final_norm = nn.LayerNorm(hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids):
        position_ids = torch.arange(input_ids.shape[1]).unsqueeze(0).expand_as(input_ids)
        h = self.embedding(input_ids, position_ids)
        h = h + self.mlp(h)
        return self.lm_head(self.final_norm(h))


def main():
    neox_args = SimpleNamespace(use_mup=True, mup_embedding_mult=10.0, mup_rp_embedding_mult=0.5)
    model = TinyNeoX(neox_args)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    input_ids = torch.randint(0, 40, (2, 8))
    logits = model(input_ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 40), input_ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach(), model.embedding.word_embeddings.weight.detach().clone(), model.embedding.position_embeddings.weight.detach().clone()


loss, word_embeddings, position_embeddings = main()
