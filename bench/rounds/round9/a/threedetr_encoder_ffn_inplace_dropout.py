# label: hazard raises
# why: the encoder FFN applies nn.Dropout(inplace=True) directly to the ReLU output, overwriting the tensor ReLU saved for backward during training
# source: https://github.com/facebookresearch/3detr/issues/55
from typing import Optional
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)

NORM_DICT = {"ln": nn.LayerNorm}
ACTIVATION_DICT = {"relu": nn.ReLU, "gelu": nn.GELU}


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead=4, dim_feedforward=128,
                 dropout=0.1, dropout_attn=None,
                 activation="relu", normalize_before=True, norm_name="ln",
                 use_ffn=True, ffn_use_bias=True):
        super().__init__()
        if dropout_attn is None:
            dropout_attn = dropout
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout_attn)
        self.use_ffn = use_ffn
        if self.use_ffn:
            # Implementation of Feedforward model
            self.linear1 = nn.Linear(d_model, dim_feedforward, bias=ffn_use_bias)
            self.dropout = nn.Dropout(dropout, inplace=True)  # <-- IPL001: applied in place to the ReLU output saved for backward
            self.linear2 = nn.Linear(dim_feedforward, d_model, bias=ffn_use_bias)
            self.norm2 = NORM_DICT[norm_name](d_model)
            self.dropout2 = nn.Dropout(dropout, inplace=True)

        self.norm1 = NORM_DICT[norm_name](d_model)
        self.dropout1 = nn.Dropout(dropout, inplace=True)

        self.activation = ACTIVATION_DICT[activation]()
        self.normalize_before = normalize_before
        self.nhead = nhead

    def with_pos_embed(self, tensor, pos: Optional[Tensor]):
        return tensor if pos is None else tensor + pos

    def forward_pre(self, src, src_mask: Optional[Tensor] = None,
                    src_key_padding_mask: Optional[Tensor] = None,
                    pos: Optional[Tensor] = None):
        src2 = self.norm1(src)
        value = src2
        q = k = self.with_pos_embed(src2, pos)
        src2 = self.self_attn(q, k, value=value, attn_mask=src_mask,
                              key_padding_mask=src_key_padding_mask)[0]
        src = src + self.dropout1(src2)
        if self.use_ffn:
            src2 = self.norm2(src)
            src2 = self.linear2(self.dropout(self.activation(self.linear1(src2))))
            src = src + self.dropout2(src2)
        return src

    def forward(self, src, src_mask=None, src_key_padding_mask=None, pos=None):
        return self.forward_pre(src, src_mask, src_key_padding_mask, pos)


class TransformerEncoder(nn.Module):
    def __init__(self, encoder_layer, num_layers):
        super().__init__()
        self.layers = nn.ModuleList([encoder_layer() for _ in range(num_layers)])

    def forward(self, src, pos=None):
        output = src
        for layer in self.layers:
            output = layer(output, pos=pos)
        return output


encoder = TransformerEncoder(lambda: TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16), 2)
encoder.train()
pre_enc_features = torch.randn(6, 2, 8, requires_grad=True)  # npoints x batch x channel
enc_pos = torch.randn(6, 2, 8)
enc_features = encoder(pre_enc_features, pos=enc_pos)
loss = enc_features.pow(2).mean()
loss.backward()
