# label: hazard raises no-twin
# why: the decoder rewrites a feature slice of the shared encoder_out tensor in place, but the encoder's output projection and the attention scores already saved encoder_out for backward.
# source: https://github.com/facebookresearch/fairseq/issues/251
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LSTMEncoder(nn.Module):
    def __init__(self, num_embeddings, embed_dim=8, hidden_size=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size)
        self.output_proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, src_tokens):
        x = self.embed_tokens(src_tokens).transpose(0, 1)  # T x B x C
        x, (final_hiddens, final_cells) = self.lstm(x)
        x = torch.tanh(self.output_proj(x))
        return {'encoder_out': (x, final_hiddens, final_cells)}


class AttentionLayer(nn.Module):
    def __init__(self, input_embed_dim, output_embed_dim):
        super().__init__()
        self.input_proj = nn.Linear(input_embed_dim, output_embed_dim, bias=False)
        self.output_proj = nn.Linear(input_embed_dim + output_embed_dim, output_embed_dim, bias=False)

    def forward(self, input, source_hids):
        x = self.input_proj(input)
        attn_scores = (source_hids * x.unsqueeze(0)).sum(dim=2)
        attn_scores = F.softmax(attn_scores, dim=0)
        x = (attn_scores.unsqueeze(2) * source_hids).sum(dim=0)
        x = torch.tanh(self.output_proj(torch.cat((x, input), dim=1)))
        return x, attn_scores


class LSTMDecoder(nn.Module):
    def __init__(self, num_embeddings, embed_dim=8, hidden_size=8, feature_scale=0.5):
        super().__init__()
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim)
        self.cell = nn.LSTMCell(embed_dim + hidden_size, hidden_size)
        self.attention = AttentionLayer(hidden_size, hidden_size)
        self.fc_out = nn.Linear(hidden_size, num_embeddings)
        self.feature_scale = feature_scale

    def do_something(self, feature):
        return feature * self.feature_scale

    def forward(self, prev_output_tokens, encoder_out_dict, step_features=()):
        encoder_out = encoder_out_dict['encoder_out']
        encoder_outs, _, _ = encoder_out[:3]
        bsz, seqlen = prev_output_tokens.size()
        x = self.embed_tokens(prev_output_tokens).transpose(0, 1)
        hidden = encoder_out[1][-1]
        cell = encoder_out[2][-1]
        input_feed = x.new_zeros(bsz, hidden.size(1))
        outs = []
        for j in range(seqlen):
            input = torch.cat((x[j, :, :], input_feed), dim=1)
            hidden, cell = self.cell(input, (hidden, cell))
            out, attn_scores = self.attention(hidden, encoder_outs)
            input_feed = out
            outs.append(out)
            if j in step_features:
                # re-weight one encoder feature channel before the next decoding step
                encoder_out[0][:, :, j] = self.do_something(encoder_out[0][:, :, j])  # <-- IPL001: writes into encoder_out, saved by the encoder's tanh and by attention
        x = torch.stack(outs, dim=0).transpose(0, 1)
        return self.fc_out(x)


encoder = LSTMEncoder(20)
decoder = LSTMDecoder(20)
src_tokens = torch.randint(0, 20, (2, 5))
prev_output_tokens = torch.randint(0, 20, (2, 4))
target = torch.randint(0, 20, (2, 4))
encoder_out = encoder(src_tokens)
logits = decoder(prev_output_tokens, encoder_out, step_features=(1,))
loss = F.cross_entropy(logits.reshape(-1, 20), target.reshape(-1))
loss.backward()
