# label: hazard raises
# why: the location-sensitive attention feeds self.cumulative (through an unsqueeze view) into self.conv, which saves it for the weight gradient, and then accumulates the new attention into it in place (self.cumulative += self.attention), so backward finds the saved location tensor already overwritten.
# source: https://github.com/CorentinJ/Real-Time-Voice-Cloning/commit/1a6622bf7b7ee5d16bd411320915035e721912e2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LSA(nn.Module):
    def __init__(self, attn_dim, kernel_size=31, filters=32):
        super().__init__()
        self.conv = nn.Conv1d(1, filters, padding=(kernel_size - 1) // 2, kernel_size=kernel_size, bias=True)
        self.L = nn.Linear(filters, attn_dim, bias=False)
        self.W = nn.Linear(attn_dim, attn_dim, bias=True)  # Include the attention bias in this term
        self.v = nn.Linear(attn_dim, 1, bias=False)
        self.cumulative = None
        self.attention = None

    def init_attention(self, encoder_seq_proj):
        device = next(self.parameters()).device  # use same device as parameters
        b, t, c = encoder_seq_proj.size()
        self.cumulative = torch.zeros(b, t, device=device)
        self.attention = torch.zeros(b, t, device=device)

    def forward(self, encoder_seq_proj, query, t, chars):

        if t == 0: self.init_attention(encoder_seq_proj)

        processed_query = self.W(query).unsqueeze(1)

        location = self.cumulative.unsqueeze(1)
        processed_loc = self.L(self.conv(location).transpose(1, 2))

        u = self.v(torch.tanh(processed_query + encoder_seq_proj + processed_loc))
        u = u.squeeze(-1)

        # Mask zero padding chars
        u = u * (chars != 0).float()

        # Smooth Attention
        scores = F.softmax(u, dim=1)
        self.attention = scores
        self.cumulative += self.attention  # <-- IPL001

        return scores.unsqueeze(-1).transpose(1, 2)


class Decoder(nn.Module):
    def __init__(self, n_mels=8, encoder_dims=16, decoder_dims=16, lstm_dims=16):
        super().__init__()
        self.n_mels = n_mels
        self.prenet = nn.Sequential(nn.Linear(n_mels, decoder_dims), nn.ReLU())
        self.attn_net = LSA(decoder_dims, kernel_size=7, filters=4)
        self.attn_rnn = nn.GRUCell(encoder_dims + decoder_dims, decoder_dims)
        self.rnn_input = nn.Linear(encoder_dims + decoder_dims, lstm_dims)
        self.mel_proj = nn.Linear(lstm_dims, n_mels)

    def forward(self, encoder_seq, encoder_seq_proj, prenet_in, attn_hidden, context_vec, t, chars):
        prenet_out = self.prenet(prenet_in)
        attn_rnn_in = torch.cat([context_vec, prenet_out], dim=-1)
        attn_hidden = self.attn_rnn(attn_rnn_in, attn_hidden)
        scores = self.attn_net(encoder_seq_proj, attn_hidden, t, chars)
        context_vec = scores @ encoder_seq
        context_vec = context_vec.squeeze(1)
        x = torch.tanh(self.rnn_input(torch.cat([context_vec, attn_hidden], dim=1)))
        mels = self.mel_proj(x)
        return mels, scores, attn_hidden, context_vec


class Tacotron(nn.Module):
    def __init__(self, num_chars=12, encoder_dims=16, decoder_dims=16, n_mels=8):
        super().__init__()
        self.n_mels = n_mels
        self.decoder_dims = decoder_dims
        self.encoder = nn.Embedding(num_chars, encoder_dims)
        self.encoder_proj = nn.Linear(encoder_dims, decoder_dims, bias=False)
        self.decoder = Decoder(n_mels, encoder_dims, decoder_dims)

    def forward(self, x, m):
        batch_size, _, steps = m.size()
        attn_hidden = torch.zeros(batch_size, self.decoder_dims)
        context_vec = torch.zeros(batch_size, self.decoder_dims)
        encoder_seq = self.encoder(x)
        encoder_seq_proj = self.encoder_proj(encoder_seq)
        mel_outputs, attn_scores = [], []
        go_frame = torch.zeros(batch_size, self.n_mels)
        # Run the decoder loop
        for t in range(0, steps):
            prenet_in = m[:, :, t - 1] if t > 0 else go_frame
            mel_frames, scores, attn_hidden, context_vec = \
                self.decoder(encoder_seq, encoder_seq_proj, prenet_in, attn_hidden, context_vec, t, x)
            mel_outputs.append(mel_frames)
            attn_scores.append(scores)
        mel_outputs = torch.stack(mel_outputs, dim=2)
        attn_scores = torch.cat(attn_scores, 1)
        return mel_outputs, attn_scores


def main():
    model = Tacotron()
    texts = torch.randint(1, 12, (2, 9))
    texts[1, 7:] = 0  # zero padding chars
    mels = torch.randn(2, 8, 5)
    m_hat, attention = model(texts, mels)
    loss = F.mse_loss(m_hat, mels) + attention.mean()
    loss.backward()
    return loss.detach(), model.decoder.attn_net.conv.weight.grad, model.encoder.weight.grad


loss, loc_conv_grad, embed_grad = main()
