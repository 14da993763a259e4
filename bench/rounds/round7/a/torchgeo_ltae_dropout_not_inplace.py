# label: safe
# why: the merged fix drops inplace=True from the LTAE dropout, so the ReLU output saved by the MLP is left untouched.
# source: https://github.com/torchgeo/torchgeo/pull/3737
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def get_sinusoid_encoding_table(positions, d_hid, T=1000):
    def cal_angle(position, hid_idx):
        return position / np.power(T, 2 * (hid_idx // 2) / d_hid)

    def get_posi_angle_vec(position):
        return [cal_angle(position, hid_j) for hid_j in range(d_hid)]

    sinusoid_table = np.array([get_posi_angle_vec(pos_i) for pos_i in range(positions)])
    sinusoid_table[:, 0::2] = np.sin(sinusoid_table[:, 0::2])
    sinusoid_table[:, 1::2] = np.cos(sinusoid_table[:, 1::2])
    return torch.FloatTensor(sinusoid_table)


class ScaledDotProductAttention(nn.Module):
    def __init__(self, temperature, attn_dropout=0.1):
        super().__init__()
        self.temperature = temperature
        self.dropout = nn.Dropout(attn_dropout)
        self.softmax = nn.Softmax(dim=2)

    def forward(self, q, k, v):
        attn = torch.matmul(q.unsqueeze(1), k.transpose(1, 2))
        attn = attn / self.temperature
        attn = self.softmax(attn)
        attn = self.dropout(attn)
        output = torch.matmul(attn, v)
        return output, attn


class MultiHeadAttention(nn.Module):
    def __init__(self, n_head, d_k, d_in):
        super().__init__()
        self.n_head = n_head
        self.d_k = d_k
        self.d_in = d_in
        self.Q = nn.Parameter(torch.zeros((n_head, d_k))).requires_grad_(True)
        nn.init.normal_(self.Q, mean=0, std=np.sqrt(2.0 / (d_k)))
        self.fc1_k = nn.Linear(d_in, n_head * d_k)
        self.attention = ScaledDotProductAttention(temperature=np.power(d_k, 0.5))

    def forward(self, q, k, v):
        d_k, d_in, n_head = self.d_k, self.d_in, self.n_head
        sz_b, seq_len, _ = q.size()
        q = torch.stack([self.Q for _ in range(sz_b)], dim=1).view(-1, d_k)
        k = self.fc1_k(v).view(sz_b, seq_len, n_head, d_k)
        k = k.permute(2, 0, 1, 3).contiguous().view(-1, seq_len, d_k)
        v = torch.stack(v.split(v.shape[-1] // n_head, dim=-1)).view(n_head * sz_b, seq_len, -1)
        output, attn = self.attention(q, k, v)
        output = output.view(n_head, sz_b, 1, d_in // n_head).squeeze(dim=2)
        return output, attn


class LTAE(nn.Module):
    def __init__(self, in_channels=16, n_head=4, d_k=4, n_neurons=(16, 32), dropout=0.2, d_model=16, T=1000, len_max_seq=5):
        super().__init__()
        self.in_channels = in_channels
        self.n_neurons = list(n_neurons)
        self.d_model = d_model
        self.inconv = nn.Sequential(nn.Conv1d(in_channels, d_model, 1), nn.LayerNorm((d_model, len_max_seq)))
        sin_tab = get_sinusoid_encoding_table(len_max_seq + 1, self.d_model // n_head, T=T)
        self.positional_enc = nn.Embedding.from_pretrained(torch.cat([sin_tab for _ in range(n_head)], dim=1), freeze=True)
        self.inlayernorm = nn.LayerNorm(self.in_channels)
        self.outlayernorm = nn.LayerNorm(n_neurons[-1])
        self.attention_heads = MultiHeadAttention(n_head=n_head, d_k=d_k, d_in=self.d_model)

        layers = []
        for i in range(len(self.n_neurons) - 1):
            layers.extend([nn.Linear(self.n_neurons[i], self.n_neurons[i + 1]),
                           nn.BatchNorm1d(self.n_neurons[i + 1]),
                           nn.ReLU()])
        self.mlp = nn.Sequential(*layers)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        sz_b, seq_len, d = x.shape
        x = self.inlayernorm(x)
        x = self.inconv(x.permute(0, 2, 1)).permute(0, 2, 1)
        src_pos = torch.arange(1, seq_len + 1, dtype=torch.long).expand(sz_b, seq_len)
        enc_output = x + self.positional_enc(src_pos)
        enc_output, attn = self.attention_heads(enc_output, enc_output, enc_output)
        enc_output = enc_output.permute(1, 0, 2).contiguous().view(sz_b, -1)
        enc_output = self.outlayernorm(self.dropout(self.mlp(enc_output)))
        return enc_output


model = LTAE(in_channels=16, d_model=16, n_head=4, n_neurons=(16, 32), len_max_seq=5)
x = torch.randn(2, 5, 16)
y = model(x)
loss = y.mean()
loss.backward()
