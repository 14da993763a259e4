# label: hazard raises
# why: the non-stationary normalisation divides x_enc by stdev in place, but torch.var saved that same centred x_enc for backward, so input-gradient attribution through the forecaster fails.
# source: https://github.com/thuml/Time-Series-Library/pull/709 (commit 4c2fae5cf876be2da36f1ae3288877ad169662c2)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TimesBlock(nn.Module):
    def __init__(self, seq_len, pred_len, d_model, d_ff, k=2):
        super().__init__()
        self.seq_len = seq_len
        self.pred_len = pred_len
        self.k = k
        self.conv = nn.Sequential(nn.Conv2d(d_model, d_ff, 3, padding=1), nn.GELU(), nn.Conv2d(d_ff, d_model, 3, padding=1))

    def forward(self, x):
        B, T, N = x.size()
        xf = torch.fft.rfft(x, dim=1)
        frequency_list = abs(xf).mean(0).mean(-1)
        frequency_list[0] = 0
        _, top_list = torch.topk(frequency_list, self.k)
        top_list = top_list.detach().cpu().numpy()
        period_list = [max(1, T // int(f)) if int(f) > 0 else T for f in top_list]
        res = []
        for period in period_list:
            length = ((T + period - 1) // period) * period
            out = x if length == T else torch.cat([x, torch.zeros(B, length - T, N)], dim=1)
            out = out.reshape(B, length // period, period, N).permute(0, 3, 1, 2).contiguous()
            out = self.conv(out)
            out = out.permute(0, 2, 3, 1).reshape(B, -1, N)
            res.append(out[:, :T, :])
        res = torch.stack(res, dim=-1).mean(-1)
        return res + x


class Model(nn.Module):
    def __init__(self, seq_len=8, pred_len=4, enc_in=3, d_model=6, d_ff=8, e_layers=2):
        super().__init__()
        self.seq_len = seq_len
        self.pred_len = pred_len
        self.layer = e_layers
        self.enc_embedding = nn.Linear(enc_in, d_model)
        self.model = nn.ModuleList([TimesBlock(seq_len, pred_len, d_model, d_ff) for _ in range(e_layers)])
        self.predict_linear = nn.Linear(seq_len, pred_len + seq_len)
        self.layer_norm = nn.LayerNorm(d_model)
        self.projection = nn.Linear(d_model, enc_in)

    def forecast(self, x_enc):
        # Normalization from Non-stationary Transformer
        means = x_enc.mean(1, keepdim=True).detach()
        x_enc = x_enc - means
        stdev = torch.sqrt(torch.var(x_enc, dim=1, keepdim=True, unbiased=False) + 1e-5)
        x_enc /= stdev  # <-- IPL001: torch.var saved this x_enc for backward

        enc_out = self.enc_embedding(x_enc)
        enc_out = self.predict_linear(enc_out.permute(0, 2, 1)).permute(0, 2, 1)
        for i in range(self.layer):
            enc_out = self.layer_norm(self.model[i](enc_out))
        dec_out = self.projection(enc_out)

        # De-Normalization from Non-stationary Transformer
        dec_out = dec_out * (stdev[:, 0, :].unsqueeze(1).repeat(1, self.pred_len + self.seq_len, 1))
        dec_out = dec_out + (means[:, 0, :].unsqueeze(1).repeat(1, self.pred_len + self.seq_len, 1))
        return dec_out

    def forward(self, x_enc):
        dec_out = self.forecast(x_enc)
        return dec_out[:, -self.pred_len:, :]


model = Model()
# input-gradient saliency: which past time steps drive the forecast?
batch_x = torch.randn(2, 8, 3, requires_grad=True)
batch_y = torch.randn(2, 4, 3)
outputs = model(batch_x)
loss = F.mse_loss(outputs, batch_y)
loss.backward()
saliency = batch_x.grad
