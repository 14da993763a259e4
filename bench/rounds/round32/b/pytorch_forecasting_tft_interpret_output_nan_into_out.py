# label: hazard silent
# why: TemporalFusionTransformer.interpret_output takes `decoder_attention = out["decoder_attention"]` and writes NaN into padded decoder steps by index assignment; `_log_interpretation` passes `detach(out)`, which shares storage, so logging during the step overwrites the raw attention the step returns to the caller (the fix clones first).
# source: https://github.com/sktime/pytorch-forecasting/commit/e842993b12671a5e045a7f2b9acac78d5454356e
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# utils

def create_mask(size: int, lengths: torch.LongTensor, inverse: bool = False) -> torch.BoolTensor:
    if inverse:  # return where values are
        return torch.arange(size, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(-1)
    else:  # return where no values are
        return torch.arange(size, device=lengths.device).unsqueeze(0) >= lengths.unsqueeze(-1)


def detach(x):
    if isinstance(x, torch.Tensor):
        return x.detach()
    elif isinstance(x, dict):
        return {name: detach(xi) for name, xi in x.items()}
    elif isinstance(x, (list, tuple)):
        return [detach(xi) for xi in x]
    else:
        return x


def masked_op(tensor: torch.Tensor, op: str = "mean", dim: int = 0, mask: torch.Tensor = None) -> torch.Tensor:
    if mask is None:
        mask = ~torch.isnan(tensor)
    masked = tensor.masked_fill(~mask, 0.0)
    summed = masked.sum(dim=dim)
    if op == "mean":
        return summed / mask.sum(dim=dim)
    elif op == "sum":
        return summed
    else:
        raise ValueError(f"unkown operation {op}")


# sub modules

class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float = None, scale: bool = True):
        super(ScaledDotProductAttention, self).__init__()
        self.dropout = nn.Dropout(p=dropout) if dropout is not None else dropout
        self.softmax = nn.Softmax(dim=2)
        self.scale = scale

    def forward(self, q, k, v, mask=None):
        attn = torch.bmm(q, k.permute(0, 2, 1))  # query-key overlap
        if self.scale:
            dimension = torch.as_tensor(k.size(-1), dtype=attn.dtype, device=attn.device).sqrt()
            attn = attn / dimension
        if mask is not None:
            attn = attn.masked_fill(mask, -1e9)
        attn = self.softmax(attn)
        if self.dropout is not None:
            attn = self.dropout(attn)
        output = torch.bmm(attn, v)
        return output, attn


class InterpretableMultiHeadAttention(nn.Module):
    def __init__(self, n_head: int, d_model: int, dropout: float = 0.0):
        super(InterpretableMultiHeadAttention, self).__init__()
        self.n_head = n_head
        self.d_model = d_model
        self.d_k = self.d_q = self.d_v = d_model // n_head
        self.dropout = nn.Dropout(p=dropout)
        self.v_layer = nn.Linear(self.d_model, self.d_v)
        self.q_layers = nn.ModuleList([nn.Linear(self.d_model, self.d_q) for _ in range(self.n_head)])
        self.k_layers = nn.ModuleList([nn.Linear(self.d_model, self.d_k) for _ in range(self.n_head)])
        self.attention = ScaledDotProductAttention()
        self.w_h = nn.Linear(self.d_v, self.d_model, bias=False)

    def forward(self, q, k, v, mask=None):
        heads = []
        attns = []
        vs = self.v_layer(v)
        for i in range(self.n_head):
            qs = self.q_layers[i](q)
            ks = self.k_layers[i](k)
            head, attn = self.attention(qs, ks, vs, mask)
            head_dropout = self.dropout(head)
            heads.append(head_dropout)
            attns.append(attn)
        head = torch.stack(heads, dim=2) if self.n_head > 1 else heads[0]
        attn = torch.stack(attns, dim=2)
        outputs = torch.mean(head, dim=2) if self.n_head > 1 else head
        outputs = self.w_h(outputs)
        outputs = self.dropout(outputs)
        return outputs, attn


class TemporalFusionTransformer(nn.Module):
    def __init__(self, n_reals=3, hidden_size=8, n_head=2, max_encoder_length=6, log_interval=1):
        super().__init__()
        self.max_encoder_length = max_encoder_length
        self.log_interval = log_interval
        self.causal_attention = True
        self.variable_selection = nn.Linear(n_reals, n_reals)
        self.static_selection = nn.Linear(1, 2)
        self.input_projection = nn.Linear(n_reals, hidden_size)
        self.lstm_encoder = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self.lstm_decoder = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self.multihead_attn = InterpretableMultiHeadAttention(n_head=n_head, d_model=hidden_size)
        self.output_layer = nn.Linear(hidden_size, 1)

    def get_attention_mask(self, encoder_lengths, decoder_lengths):
        decoder_length = decoder_lengths.max()
        if self.causal_attention:
            attend_step = torch.arange(decoder_length)
            predict_step = torch.arange(0, decoder_length)[:, None]
            decoder_mask = (attend_step >= predict_step).unsqueeze(0).expand(encoder_lengths.size(0), -1, -1)
        else:
            decoder_mask = create_mask(decoder_length, decoder_lengths).unsqueeze(1).expand(-1, decoder_length, -1)
        encoder_mask = create_mask(encoder_lengths.max(), encoder_lengths).unsqueeze(1).expand(-1, decoder_length, -1)
        mask = torch.cat((encoder_mask, decoder_mask), dim=2)
        return mask

    def forward(self, x: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        encoder_lengths = x["encoder_lengths"]
        decoder_lengths = x["decoder_lengths"]
        max_encoder_length = int(encoder_lengths.max())

        encoder_sparse_weights = self.variable_selection(x["encoder_cont"]).softmax(-1).unsqueeze(-2)
        decoder_sparse_weights = self.variable_selection(x["decoder_cont"]).softmax(-1).unsqueeze(-2)
        static_variable_selection = self.static_selection(x["static"]).softmax(-1).unsqueeze(1)

        embeddings_varying_encoder = self.input_projection(x["encoder_cont"] * encoder_sparse_weights.squeeze(-2))
        embeddings_varying_decoder = self.input_projection(x["decoder_cont"] * decoder_sparse_weights.squeeze(-2))

        encoder_output, (hidden, cell) = self.lstm_encoder(embeddings_varying_encoder)
        decoder_output, _ = self.lstm_decoder(embeddings_varying_decoder, (hidden, cell))

        attn_input = torch.cat([encoder_output, decoder_output], dim=1)
        attn_output, attn_output_weights = self.multihead_attn(
            q=attn_input[:, max_encoder_length:],  # query only for predictions
            k=attn_input,
            v=attn_input,
            mask=self.get_attention_mask(encoder_lengths=encoder_lengths, decoder_lengths=decoder_lengths),
        )
        output = self.output_layer(attn_output + decoder_output).squeeze(-1)

        return dict(
            prediction=output,
            encoder_attention=attn_output_weights[..., :max_encoder_length],
            decoder_attention=attn_output_weights[..., max_encoder_length:],
            static_variables=static_variable_selection,
            encoder_variables=encoder_sparse_weights,
            decoder_variables=decoder_sparse_weights,
            decoder_lengths=decoder_lengths,
            encoder_lengths=encoder_lengths,
        )

    def interpret_output(self, out, reduction: str = "none", attention_prediction_horizon: int = 0):
        decoder_attention = out["decoder_attention"]
        decoder_mask = create_mask(out["decoder_attention"].size(1), out["decoder_lengths"])
        decoder_attention[decoder_mask[..., None, None].expand_as(decoder_attention)] = float("nan")  # <-- IPL004

        # roll encoder attention (so start last encoder value is on the right)
        encoder_attention = out["encoder_attention"]
        shifts = encoder_attention.size(3) - out["encoder_lengths"]
        new_index = (
            torch.arange(encoder_attention.size(3))[None, None, None].expand_as(encoder_attention)
            - shifts[:, None, None, None]
        ) % encoder_attention.size(3)
        encoder_attention = torch.gather(encoder_attention, dim=3, index=new_index)

        # combine attention vector
        attention = torch.concat([encoder_attention, decoder_attention], dim=-1)
        attention[attention < 1e-5] = float("nan")

        encoder_variables = out["encoder_variables"].squeeze(-2)
        encode_mask = create_mask(encoder_variables.size(1), out["encoder_lengths"])
        encoder_variables = encoder_variables.masked_fill(encode_mask.unsqueeze(-1), 0.0).sum(dim=1)
        encoder_variables /= (
            out["encoder_lengths"]
            .where(out["encoder_lengths"] > 0, torch.ones_like(out["encoder_lengths"]))
            .unsqueeze(-1)
        )

        decoder_variables = out["decoder_variables"].squeeze(-2)
        decode_mask = create_mask(decoder_variables.size(1), out["decoder_lengths"])
        decoder_variables = decoder_variables.masked_fill(decode_mask.unsqueeze(-1), 0.0).sum(dim=1)
        decoder_variables /= out["decoder_lengths"].unsqueeze(-1)

        static_variables = out["static_variables"].squeeze(1)
        attention = masked_op(
            attention[:, attention_prediction_horizon, :, : self.max_encoder_length + attention_prediction_horizon],
            op="mean",
            dim=1,
        )
        if reduction != "none":
            static_variables = static_variables.sum(dim=0)
            encoder_variables = encoder_variables.sum(dim=0)
            decoder_variables = decoder_variables.sum(dim=0)
            attention = masked_op(attention, dim=0, op=reduction)

        return dict(
            attention=attention.masked_fill(torch.isnan(attention), 0.0),
            static_variables=static_variables,
            encoder_variables=encoder_variables,
            decoder_variables=decoder_variables,
        )

    def _log_interpretation(self, out):
        interpretation = self.interpret_output(
            detach(out),
            reduction="sum",
            attention_prediction_horizon=0,  # attention only for first prediction horizon
        )
        return interpretation

    def create_log(self, x, y, out, batch_idx):
        log = {}
        if self.log_interval > 0:
            log["interpretation"] = self._log_interpretation(out)
        return log

    def step(self, x, y, batch_idx):
        out = self(x)
        prediction = out["prediction"]
        mask = create_mask(prediction.size(1), x["decoder_lengths"], inverse=True)
        loss = ((prediction - y) ** 2 * mask).sum() / mask.sum()
        log = self.create_log(x, y, out, batch_idx)
        log["loss"] = loss
        return log, out


def main():
    model = TemporalFusionTransformer()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = {
        "encoder_cont": torch.randn(4, 6, 3),
        "decoder_cont": torch.randn(4, 4, 3),
        "static": torch.randn(4, 1),
        "encoder_lengths": torch.tensor([6, 6, 6, 6]),
        "decoder_lengths": torch.tensor([4, 2, 3, 4]),
    }
    y = torch.randn(4, 4)

    log, out = model.step(x, y, batch_idx=0)
    optimizer.zero_grad()
    log["loss"].backward()
    optimizer.step()

    # raw output kept by the caller, e.g. for plotting attention of the last batch
    raw_decoder_attention = out["decoder_attention"].detach()
    mean_attention_on_forecast = raw_decoder_attention.sum(-1).mean()
    return log["loss"].detach(), log["interpretation"]["attention"], raw_decoder_attention, mean_attention_on_forecast


loss, logged_attention, raw_decoder_attention, mean_attention_on_forecast = main()
