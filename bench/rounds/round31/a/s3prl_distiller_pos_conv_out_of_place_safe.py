# label: safe
# why: the fix writes `x = x + x_conv`, so the input that pos_conv saved for its weight gradient is left intact; only the padding positions are zeroed in place before the conv reads x.
# source: https://github.com/s3prl/s3prl/commit/0d6741c7f602ba7c4c98fb2e40594e097e198095
import math
import warnings

import torch
import torch.nn.functional as F
from torch import nn

warnings.filterwarnings("ignore")
torch.manual_seed(0)


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return x


class TransformerSentenceEncoderLayer(nn.Module):
    def __init__(self, embedding_dim=32, ffn_embedding_dim=64, num_attention_heads=4, dropout=0.0, layer_norm_first=False):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.activation_fn = F.gelu
        self.self_attn = nn.MultiheadAttention(embedding_dim, num_attention_heads, dropout=0.0)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.layer_norm_first = layer_norm_first
        self.self_attn_layer_norm = nn.LayerNorm(self.embedding_dim)
        self.fc1 = nn.Linear(self.embedding_dim, ffn_embedding_dim)
        self.fc2 = nn.Linear(ffn_embedding_dim, self.embedding_dim)
        self.final_layer_norm = nn.LayerNorm(self.embedding_dim)

    def forward_self_attn(self, x, self_attn_mask=None, self_attn_padding_mask=None, need_weights=False):
        x, attn = self.self_attn(
            query=x,
            key=x,
            value=x,
            key_padding_mask=self_attn_padding_mask,
            need_weights=need_weights,
            attn_mask=self_attn_mask,
        )
        return x, attn

    def forward(self, x, self_attn_mask=None, self_attn_padding_mask=None, need_weights=False):
        residual = x
        x, attn = self.forward_self_attn(
            x, self_attn_mask=self_attn_mask, need_weights=need_weights, self_attn_padding_mask=self_attn_padding_mask
        )
        x = self.dropout1(x)
        x = residual + x
        x = self.self_attn_layer_norm(x)

        residual = x
        x = self.activation_fn(self.fc1(x))
        x = self.dropout2(x)
        x = self.fc2(x)
        x = self.dropout3(x)
        x = residual + x
        x = self.final_layer_norm(x)
        return x, attn


class TransformerEncoder(nn.Module):
    def __init__(self, embedding_dim=32, conv_pos=8, conv_pos_groups=4, encoder_layers=2, layer_norm_first=False):
        super().__init__()
        self.dropout = 0.0
        self.embedding_dim = embedding_dim
        self.pos_conv = nn.Conv1d(
            self.embedding_dim,
            self.embedding_dim,
            kernel_size=conv_pos,
            padding=conv_pos // 2,
            groups=conv_pos_groups,
        )
        std = math.sqrt(4 / (conv_pos * self.embedding_dim))
        nn.init.normal_(self.pos_conv.weight, mean=0, std=std)
        nn.init.constant_(self.pos_conv.bias, 0)
        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())

        self.layers = nn.ModuleList(
            [TransformerSentenceEncoderLayer(embedding_dim=self.embedding_dim) for _ in range(encoder_layers)]
        )
        self.layer_norm_first = layer_norm_first
        self.layer_norm = nn.LayerNorm(self.embedding_dim)

    def forward(self, x, padding_mask=None, attn_mask=None, get_hidden=False):
        x, layer_results = self.extract_features(x, padding_mask, attn_mask, get_hidden=get_hidden)
        if self.layer_norm_first:
            x = self.layer_norm(x)
        return x, layer_results

    def extract_features(self, x, padding_mask=None, attn_mask=None, get_hidden=False):
        if padding_mask is not None:
            x[padding_mask] = 0

        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x + x_conv

        if not self.layer_norm_first:
            x = self.layer_norm(x)

        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)

        layer_results = []
        for i, layer in enumerate(self.layers):
            x, z = layer(x, self_attn_padding_mask=padding_mask, need_weights=False, self_attn_mask=attn_mask)
            if get_hidden:
                layer_results.append(x.transpose(0, 1))

        # T x B x C -> B x T x C
        x = x.transpose(0, 1)
        return x, layer_results


class ConvFeatureExtractionModel(nn.Module):
    def __init__(self, conv_layers):
        super().__init__()
        in_d = 1
        blocks = []
        for dim, k, stride in conv_layers:
            blocks.append(nn.Sequential(nn.Conv1d(in_d, dim, k, stride=stride, bias=False), nn.GELU()))
            in_d = dim
        self.conv_layers = nn.ModuleList(blocks)

    def forward(self, x):
        x = x.unsqueeze(1)
        for conv in self.conv_layers:
            x = conv(x)
        return x


class DistillerModel(nn.Module):
    def __init__(self, extractor_dim=16, embed_dim=32, n_tasks=3):
        super().__init__()
        self.conv_layers = [(extractor_dim, 10, 5), (extractor_dim, 3, 2)]
        self.feature_extractor = ConvFeatureExtractionModel(self.conv_layers)
        self.post_extract_proj = nn.Linear(extractor_dim, embed_dim)
        self.encoder = TransformerEncoder(embedding_dim=embed_dim)
        self.n_tasks = n_tasks
        self.output_layer = nn.Linear(embed_dim, embed_dim * n_tasks)

    def cal_pad_mask(self, pad_mask, max_len):
        pad_len = (pad_mask > 0).sum(1).long()
        for _, k_size, s_size in self.conv_layers:
            pad_len = (pad_len - k_size) // s_size + 1
        new_pad_mask = torch.ones((pad_mask.shape[0], max_len), dtype=pad_mask.dtype)
        for idx in range(pad_len.shape[0]):
            new_pad_mask[idx, pad_len[idx]:] = 0
        return new_pad_mask

    def forward_feature(self, wave, pad_mask):
        feat = self.feature_extractor(wave)
        feat = feat.transpose(1, 2)  # B x T x D
        pad_mask = self.cal_pad_mask(pad_mask, feat.shape[1])
        return feat, pad_mask

    def forward(self, wave, pad_mask):
        feat, pad_mask = self.forward_feature(wave, pad_mask)
        b_sz, t_sz, _ = feat.shape
        feat_final = self.post_extract_proj(feat)
        feat_final = feat_final.unsqueeze(1)
        pad_mask = pad_mask.unsqueeze(1).expand(-1, 1, -1).reshape(b_sz, t_sz)
        feat_final = feat_final.reshape(b_sz, t_sz, -1)
        hidden, layer_hiddens = self.encoder(feat_final, ~pad_mask.bool())
        pred = self.output_layer(hidden).reshape(b_sz, 1, t_sz, -1)
        # expand-last: B x N x T x D
        pred = pred.squeeze(1).reshape(b_sz, t_sz, self.n_tasks, -1).permute(0, 2, 1, 3)
        return feat, feat_final, pred, pad_mask


def compute_loss(pred, teacher_hiddens, cosine_loss=1.0):
    rec_loss = F.l1_loss(pred, teacher_hiddens)
    sim_loss = -F.logsigmoid(F.cosine_similarity(pred, teacher_hiddens, dim=-1)).mean()
    return rec_loss + cosine_loss * sim_loss


def main():
    distiller = DistillerModel()
    wave = torch.randn(2, 400)
    wave_len = torch.tensor([400, 300])
    pad_mask = (torch.arange(400)[None, :] < wave_len[:, None]).long()
    feat, feat_final, pred, pad_mask = distiller(wave, pad_mask)
    teacher_hiddens = torch.randn_like(pred)
    loss = compute_loss(pred, teacher_hiddens)
    loss.backward()
    return loss.detach(), distiller.post_extract_proj.weight.grad, distiller.encoder.layer_norm.weight.grad


loss, proj_grad, ln_grad = main()
