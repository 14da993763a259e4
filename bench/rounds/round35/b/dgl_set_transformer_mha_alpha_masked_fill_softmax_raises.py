# label: hazard raises
# why: in the SetTransformer MultiHeadAttention of dgl.nn.pytorch.glob, the NaN guard for padded positions was first written as `alpha.masked_fill_(mask == 0, 0.)` on the output of `th.softmax`; SoftmaxBackward saved that output, so training a graph classifier with the SetTransformer readout raises in backward.
# source: https://github.com/dmlc/dgl/commit/9d59a7e83d65ee9bf3368602365a365a64a83f59
import math

import torch as th
import torch.nn as nn
import torch.nn.functional as torch_F

th.manual_seed(0)


def pad_packed_tensor(input, lengths, value):
    """Pad a packed (sum(lengths), *) tensor to (batch, max_len, *)."""
    old_shape = input.shape
    lengths = [int(l) for l in lengths]
    max_len = max(lengths)
    x = input.new_full((len(lengths) * max_len, *old_shape[1:]), value)
    index = th.cat([th.arange(i * max_len, i * max_len + l) for i, l in enumerate(lengths)])
    x = x.index_copy(0, index, input)
    return x.view(len(lengths), max_len, *old_shape[1:])


def pack_padded_tensor(input, lengths):
    """Inverse of pad_packed_tensor."""
    batch_size, max_len = input.shape[:2]
    lengths = [int(l) for l in lengths]
    index = th.cat([th.arange(i * max_len, i * max_len + l) for i, l in enumerate(lengths)])
    return input.reshape(batch_size * max_len, *input.shape[2:])[index]


def _gen_mask(lengths_x, lengths_y, max_len_x, max_len_y):
    """ Generate binary mask array for given x and y input pairs."""
    device = lengths_x.device
    # x_mask: (batch_size, max_len_x)
    x_mask = th.arange(max_len_x, device=device).unsqueeze(0) < lengths_x.unsqueeze(1)
    # y_mask: (batch_size, max_len_y)
    y_mask = th.arange(max_len_y, device=device).unsqueeze(0) < lengths_y.unsqueeze(1)
    # mask: (batch_size, 1, max_len_x, max_len_y)
    mask = (x_mask.unsqueeze(-1) & y_mask.unsqueeze(-2)).unsqueeze(1)
    return mask


class MultiHeadAttention(nn.Module):
    r"""Multi-Head Attention block, used in Transformer, Set Transformer and so on."""
    def __init__(self, d_model, num_heads, d_head, d_ff, dropouth=0., dropouta=0.):
        super(MultiHeadAttention, self).__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_head = d_head
        self.d_ff = d_ff
        self.proj_q = nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_k = nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_v = nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_o = nn.Linear(num_heads * d_head, d_model, bias=False)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, d_ff),
            nn.ReLU(),
            nn.Dropout(dropouth),
            nn.Linear(d_ff, d_model)
        )
        self.droph = nn.Dropout(dropouth)
        self.dropa = nn.Dropout(dropouta)
        self.norm_in = nn.LayerNorm(d_model)
        self.norm_inter = nn.LayerNorm(d_model)
        self.reset_parameters()

    def reset_parameters(self):
        """Reinitialize learnable parameters."""
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, x, mem, lengths_x, lengths_mem):
        batch_size = len(lengths_x)
        max_len_x = max(lengths_x)
        max_len_mem = max(lengths_mem)
        device = x.device
        lengths_x = th.tensor(lengths_x, dtype=th.int64, device=device)
        lengths_mem = th.tensor(lengths_mem, dtype=th.int64, device=device)

        queries = self.proj_q(x).view(-1, self.num_heads, self.d_head)
        keys = self.proj_k(mem).view(-1, self.num_heads, self.d_head)
        values = self.proj_v(mem).view(-1, self.num_heads, self.d_head)

        # padding to (B, max_len_x/mem, num_heads, d_head)
        queries = pad_packed_tensor(queries, lengths_x, 0)
        keys = pad_packed_tensor(keys, lengths_mem, 0)
        values = pad_packed_tensor(values, lengths_mem, 0)

        # attention score with shape (B, num_heads, max_len_x, max_len_mem)
        e = th.einsum('bxhd,byhd->bhxy', queries, keys)
        # normalize
        e = e / math.sqrt(self.d_head)

        # generate mask
        mask = _gen_mask(lengths_x, lengths_mem, max_len_x, max_len_mem)
        e.masked_fill_(mask == 0, -float('inf'))

        # apply softmax
        alpha = th.softmax(e, dim=-1)
        alpha.masked_fill_(mask == 0, 0.)  # <-- IPL001

        # sum of value weighted by alpha
        out = th.einsum('bhxy,byhd->bxhd', alpha, values)
        # project to output
        out = self.proj_o(
            out.contiguous().view(batch_size, max_len_x, self.num_heads * self.d_head))
        # pack tensor
        out = pack_padded_tensor(out, lengths_x)

        # intra norm
        x = self.norm_in(x + out)

        # inter norm
        x = self.norm_inter(x + self.ffn(x))

        return x


class SetAttentionBlock(nn.Module):
    r"""SAB block introduced in Set-Transformer paper."""
    def __init__(self, d_model, num_heads, d_head, d_ff, dropouth=0., dropouta=0.):
        super(SetAttentionBlock, self).__init__()
        self.mha = MultiHeadAttention(d_model, num_heads, d_head, d_ff,
                                      dropouth=dropouth, dropouta=dropouta)

    def forward(self, feat, lengths):
        return self.mha(feat, feat, lengths, lengths)


class PMALayer(nn.Module):
    r"""Pooling by Multihead Attention, used as the Decoder Module in Set Transformer."""
    def __init__(self, k, d_model, num_heads, d_head, d_ff, dropouth=0., dropouta=0.):
        super(PMALayer, self).__init__()
        self.k = k
        self.d_model = d_model
        self.seed_vectors = nn.Parameter(th.FloatTensor(k, d_model))
        self.mha = MultiHeadAttention(d_model, num_heads, d_head, d_ff,
                                      dropouth=dropouth, dropouta=dropouta)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, d_ff),
            nn.ReLU(),
            nn.Dropout(dropouth),
            nn.Linear(d_ff, d_model)
        )
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.seed_vectors)

    def forward(self, feat, lengths):
        batch_size = len(lengths)
        query = self.seed_vectors.repeat(batch_size, 1)
        return self.mha(query, self.ffn(feat), [self.k] * batch_size, lengths)


class SetTransformerGraphClassifier(nn.Module):
    """Node encoder + SetTransformer encoder (SAB) + PMA decoder readout + linear head."""
    def __init__(self, in_feats, d_model, n_classes, num_heads=2, d_head=4, d_ff=16, k=1):
        super().__init__()
        self.embed = nn.Linear(in_feats, d_model)
        self.encoder = nn.ModuleList([SetAttentionBlock(d_model, num_heads, d_head, d_ff) for _ in range(2)])
        self.decoder = PMALayer(k, d_model, num_heads, d_head, d_ff)
        self.head = nn.Linear(k * d_model, n_classes)
        self.k = k
        self.d_model = d_model

    def forward(self, feat, batch_num_nodes):
        h = torch_F.relu(self.embed(feat))
        for layer in self.encoder:
            h = layer(h, batch_num_nodes)
        readout = self.decoder(h, batch_num_nodes).view(len(batch_num_nodes), self.k * self.d_model)
        return self.head(readout)


batch_num_nodes = [3, 5, 2, 4]
feat = th.randn(sum(batch_num_nodes), 6)
labels = th.tensor([0, 1, 1, 0])
model = SetTransformerGraphClassifier(in_feats=6, d_model=8, n_classes=2)
optimizer = th.optim.Adam(model.parameters(), lr=1e-3)
logits = model(feat, batch_num_nodes)
loss = torch_F.cross_entropy(logits, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
