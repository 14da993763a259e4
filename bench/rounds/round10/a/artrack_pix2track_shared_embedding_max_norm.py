# label: hazard raises no-twin
# why: word_embeddings is built with max_norm=1, so every lookup renormalizes its weight rows in place; the output projection uses that same weight (share_weight = weight.T) and the next autoregressive lookup overwrites what the matmul saved
# source: https://github.com/MIV-XJTU/ARTrack/issues/60 (fix: emb_weight = self.word_embeddings.weight.clone() in lib/models/layers/head_seq.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def generate_square_subsequent_mask(sz):
    mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
    mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
    return mask


class SimpleDecoder(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, 2)
        self.cross = nn.Linear(d_model, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, tgt, z_feat, x_feat, query_embed, tgt_mask):
        q = tgt + query_embed
        h = self.self_attn(q, q, tgt, attn_mask=tgt_mask)[0]
        ctx = self.cross(torch.cat([z_feat, x_feat], 1).mean(1)).unsqueeze(0)
        return self.norm(tgt + h + ctx)


class Pix2Track(nn.Module):
    def __init__(self, in_channel=16, bins=10, range=2, pre_num=1):
        super(Pix2Track, self).__init__()
        self.bins = bins
        self.range = range
        self.pre_num = pre_num
        self.word_embeddings = nn.Embedding(self.bins * self.range + 2, in_channel,
                                            padding_idx=self.bins * self.range, max_norm=1, norm_type=2.0)
        self.position_embeddings = nn.Embedding(5, in_channel)
        self.prev_position_embeddings = nn.Embedding(self.pre_num * 4, in_channel)
        self.output_bias = torch.nn.Parameter(torch.zeros(self.bins * self.range + 2))
        self.decoder = SimpleDecoder(in_channel)
        self.tz = 4

    def forward(self, zx_feat, seqs_input=None):
        emb_weight = self.word_embeddings.weight
        share_weight = emb_weight.T

        z_feat = zx_feat[:, :self.tz]
        x_feat = zx_feat[:, self.tz:]
        out_list = []
        bs = zx_feat.shape[0]

        seqs_origin = seqs_input
        start_token = torch.ones(bs, 1) * self.bins * self.range
        start_token = start_token.to(seqs_origin)
        real_seq = torch.cat([seqs_origin, start_token], dim=1)
        seqs_input = real_seq.to(torch.int64)

        for i in range(4):
            tgt = self.word_embeddings(seqs_input).permute(1, 0, 2)  # <-- IPL001: max_norm lookup renormalizes the embedding weight in place, which the previous step's matmul saved via share_weight
            query_embed_ = self.position_embeddings.weight.unsqueeze(1)
            prev_embed = self.prev_position_embeddings.weight.unsqueeze(1)
            query_embed = torch.cat([prev_embed, query_embed_], dim=0)
            query_embed = query_embed.repeat(1, bs, 1)
            decoder_feat_cls = self.decoder(tgt, z_feat, x_feat, query_embed[:len(tgt)],
                                            tgt_mask=generate_square_subsequent_mask(len(seqs_input[0])))
            out = torch.matmul(decoder_feat_cls.transpose(0, 1)[:, -1, :], share_weight) + self.output_bias
            out_list.append(out.unsqueeze(0))
            out = out.softmax(-1)
            value, extra_seq = out.topk(dim=-1, k=1)[0], out.topk(dim=-1, k=1)[1]
            seqs_input = torch.cat([seqs_input, extra_seq], dim=-1)
            if i == 0:
                seqs_output = extra_seq
                values = value
            else:
                seqs_output = torch.cat([seqs_output, extra_seq], dim=-1)
                values = torch.cat([values, value], dim=-1)
        feat = torch.cat(out_list)
        return {'seqs': seqs_output, 'class': values, 'feat': feat, "state": "val/test"}


head = Pix2Track()
with torch.no_grad():
    head.word_embeddings.weight.mul_(3.0)   # pretrained embeddings are not unit-norm
zx_feat = torch.randn(2, 4 + 9, 16)
prev_seq = torch.randint(0, 20, (2, 4))
gt_seq = torch.randint(0, 20, (2, 4))
output = head(zx_feat, prev_seq)
loss = F.cross_entropy(output['feat'].permute(1, 2, 0), gt_seq)
loss.backward()
