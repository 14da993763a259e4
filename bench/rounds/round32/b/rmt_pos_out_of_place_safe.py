# label: safe
# why: the fix: `pos = pos + 10000` builds the rotary positions in a new tensor, so the indices saved by the `pos_emb` lookup stay intact and the segment-recurrent training loss backpropagates.
# source: https://github.com/lucidrains/recurrent-memory-transformer-pytorch/commit/863ecfc9ee47d085994501545e23c15fa802486b
import torch
import torch.nn.functional as F
from torch import nn, einsum

torch.manual_seed(0)

# helpers

def exists(val):
    return val is not None


# attend

class Attend(nn.Module):
    def __init__(self, dropout = 0., causal = False, use_flash = False):
        super().__init__()
        self.dropout = dropout
        self.attn_dropout = nn.Dropout(dropout)
        self.causal = causal
        self.register_buffer("mask", None, persistent=False)
        self.use_flash = use_flash

    def get_mask(self, n, device):
        if exists(self.mask) and self.mask.shape[-1] >= n:
            return self.mask[:n, :n]
        mask = torch.ones((n, n), device=device, dtype=torch.bool).triu(1)
        self.register_buffer("mask", mask, persistent=False)
        return mask

    def forward(self, q, k, v, mask = None):
        n, device = q.shape[-2], q.device
        scale = q.shape[-1] ** -0.5
        sim = einsum("b h i d, b h j d -> b h i j", q, k) * scale
        if self.causal:
            causal_mask = self.get_mask(n, device)
            sim = sim.masked_fill(causal_mask, -torch.finfo(sim.dtype).max)
        attn = sim.softmax(dim=-1)
        attn = self.attn_dropout(attn)
        out = einsum("b h i j, b h j d -> b h i d", attn, v)
        return out


# rotary embedding

class RotaryEmbedding(nn.Module):
    def __init__(self, dim, theta = 64000):
        super().__init__()
        inv_freq = 1. / (theta ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer('inv_freq', inv_freq)

    def forward(self, positions):
        freqs = torch.einsum('i , j -> i j', positions, self.inv_freq)
        freqs = torch.cat((freqs, freqs), dim = -1)
        return freqs


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(pos, t):
    return (t * pos.cos()) + (rotate_half(t) * pos.sin())


# norms

class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** 0.5
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return F.normalize(x, dim = -1) * self.scale * self.gamma


# feedforward

class GEGLU(nn.Module):
    def forward(self, x):
        x, gate = x.chunk(2, dim = -1)
        return x * F.gelu(gate)


def FeedForward(dim, mult = 4):
    dim_inner = int(dim * mult * 2 / 3)
    return nn.Sequential(
        RMSNorm(dim),
        nn.Linear(dim, dim_inner * 2),
        GEGLU(),
        nn.Linear(dim_inner, dim)
    )


# attention

class Attention(nn.Module):
    def __init__(self, *, dim, causal = False, dim_head = 64, heads = 8, dropout = 0., use_flash_attn = False):
        super().__init__()
        dim_inner = dim_head * heads
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.attend = Attend(causal = causal, dropout = dropout, use_flash = use_flash_attn)
        self.norm = RMSNorm(dim)
        self.to_q = nn.Linear(dim, dim_inner, bias = False)
        self.to_kv = nn.Linear(dim, dim_inner * 2, bias = False)
        self.to_out = nn.Linear(dim_inner, dim, bias = False)

    def forward(self, x, rotary_emb = None):
        h = self.heads
        x = self.norm(x)
        q = self.to_q(x)
        k, v = self.to_kv(x).chunk(2, dim = -1)
        q, k, v = map(lambda t: t.reshape(t.shape[0], t.shape[1], h, -1).transpose(1, 2), (q, k, v))
        if exists(rotary_emb):
            q = apply_rotary_pos_emb(rotary_emb, q)
            k = apply_rotary_pos_emb(rotary_emb, k)
        out = self.attend(q, k, v)
        out = out.transpose(1, 2).reshape(out.shape[0], out.shape[2], -1)
        return self.to_out(out)


# transformer

class RecurrentMemoryTransformer(nn.Module):
    def __init__(self, dim, *, num_tokens, depth, num_memory_tokens, seq_len, causal = True,
                 dim_head = 64, heads = 8, ff_mult = 4, use_flash_attn = False):
        super().__init__()
        self.seq_len = seq_len
        assert num_memory_tokens > 0
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.pos_emb = nn.Embedding(seq_len, dim)
        self.rotary_pos_emb = RotaryEmbedding(dim_head)
        self.num_memory_tokens = num_memory_tokens
        self.memory_tokens = nn.Parameter(torch.randn(num_memory_tokens, dim))
        nn.init.normal_(self.memory_tokens, std = 0.02)
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                Attention(dim = dim, dim_head = dim_head, causal = causal, heads = heads, use_flash_attn = use_flash_attn),
                FeedForward(dim = dim, mult = ff_mult)
            ]))
        self.to_logits = nn.Sequential(
            RMSNorm(dim),
            nn.Linear(dim, num_tokens, bias = False)
        )

    def forward(self, x, past_memories = None):
        b, n, device, mem_length = *x.shape, x.device, self.num_memory_tokens

        pos = torch.arange(n, device = device)

        x = self.token_emb(x)
        x = x + self.pos_emb(pos)

        # concat past memories, if needed

        past_length = 0
        if exists(past_memories):
            x = torch.cat((past_memories, x), dim = -2)
            past_length = mem_length

        # concat memories into the future, to be passed onto the next segment

        future_memories = self.memory_tokens.unsqueeze(0).expand(b, -1, -1)
        x = torch.cat((x, future_memories), dim = -2)

        # rotary embedding - offset main positions by 10000, and keep all memories at position 0

        pos = pos + 10000
        pos = F.pad(pos, (past_length, mem_length), value = 0)

        rotary_emb = self.rotary_pos_emb(pos)

        # attention and feedforward

        for attn, ff in self.layers:
            x = attn(x, rotary_emb = rotary_emb) + x
            x = ff(x) + x

        # split out memories

        past_memories, x, memories = x[:, :past_length], x[:, past_length:-mem_length], x[:, -mem_length:]

        return self.to_logits(x), memories


# wrapper to manage many segments

class RecurrentMemoryTransformerWrapper(nn.Module):
    def __init__(self, transformer):
        super().__init__()
        self.transformer = transformer
        self.seq_len = transformer.seq_len

    def forward(self, x, memories = None, return_loss = False):
        if return_loss:
            x, labels = x[:, :-1], x[:, 1:]

        segments = x.split(self.seq_len, dim = -1)

        all_logits = []
        for segment in segments:
            logits, memories = self.transformer(segment, memories)
            all_logits.append(logits)

        all_logits = torch.cat(all_logits, dim = -2)

        if return_loss:
            all_logits = all_logits.transpose(1, 2)
            return F.cross_entropy(all_logits, labels)

        return all_logits, memories


def main():
    model = RecurrentMemoryTransformer(32, num_tokens = 50, depth = 2, num_memory_tokens = 4, seq_len = 8,
                                       dim_head = 8, heads = 4)
    wrapper = RecurrentMemoryTransformerWrapper(model)
    x = torch.randint(0, 50, (2, 25))
    loss = wrapper(x, return_loss = True)
    loss.backward()
    return loss.detach(), model.pos_emb.weight.grad.clone()


loss, pos_emb_grad = main()
