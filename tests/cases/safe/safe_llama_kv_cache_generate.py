# label: safe
# why: greedy decoding under torch.no_grad writes each step's keys/values into a preallocated KV cache by slice assignment and reads back only the filled prefix; nothing is differentiated.
import torch
import torch.nn as nn
import torch.nn.functional as F


class CachedSelfAttention(nn.Module):
    def __init__(self, dim, heads, max_len):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.max_len = max_len

    def init_cache(self, bsz):
        shape = (bsz, self.heads, self.max_len, self.hd)
        self.cache_k = torch.zeros(shape)
        self.cache_v = torch.zeros(shape)

    def forward(self, x, start_pos):
        b, s, _ = x.shape
        q, k, v = self.wqkv(x).view(b, s, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        self.cache_k[:, :, start_pos:start_pos + s] = k
        self.cache_v[:, :, start_pos:start_pos + s] = v
        keys = self.cache_k[:, :, : start_pos + s]
        values = self.cache_v[:, :, : start_pos + s]
        scores = q @ keys.transpose(-1, -2) / self.hd ** 0.5
        if s > 1:
            causal = torch.full((s, s), float("-inf")).triu(1)
            scores = scores + causal
        out = F.softmax(scores, dim=-1) @ values
        return self.wo(out.transpose(1, 2).reshape(b, s, -1))


class TinyLM(nn.Module):
    def __init__(self, vocab=13, dim=8, heads=2, max_len=12):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([CachedSelfAttention(dim, heads, max_len) for _ in range(2)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids, start_pos):
        h = self.tok(ids)
        for layer in self.layers:
            h = h + layer(h, start_pos)
        return self.out(self.norm(h))


@torch.no_grad()
def generate(model, prompt, max_new_tokens):
    bsz, plen = prompt.shape
    for layer in model.layers:
        layer.init_cache(bsz)
    tokens = torch.zeros(bsz, plen + max_new_tokens, dtype=torch.long)
    tokens[:, :plen] = prompt
    logits = model(prompt, 0)
    cur = plen
    all_logits = []
    while cur < plen + max_new_tokens:
        next_logits = logits[:, -1]
        all_logits.append(next_logits)
        next_tok = next_logits.argmax(-1)
        tokens[:, cur] = next_tok
        logits = model(next_tok[:, None], cur)
        cur += 1
    return tokens, torch.stack(all_logits, 1)


torch.manual_seed(0)
lm = TinyLM()
prompt = torch.tensor([[1, 5, 2], [7, 7, 3]])
generated, step_logits = generate(lm, prompt, 5)
generated_f = generated.float()
