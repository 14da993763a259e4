# label: safe
# why: scatter_add_ and the slice/step writes go into freshly allocated zero buffers whose old values no backward formula needs, so the pointer-generator distribution keeps correct gradients.
# source: https://github.com/stanfordnlp/stanza/commit/a8ee27cf63577d4df007bc0923cdfb0859f3bf90
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BahdanauAttention(nn.Module):
    def __init__(self, encoder_hidden_dim, decoder_hidden_dim):
        super().__init__()
        self.W_h = nn.Linear(encoder_hidden_dim * 2, decoder_hidden_dim)
        self.W_s = nn.Linear(decoder_hidden_dim, decoder_hidden_dim)
        self.v = nn.Linear(decoder_hidden_dim, 1)
        self.b_attn = nn.Parameter(torch.rand(decoder_hidden_dim))

    def forward(self, encoder_outputs, decoder_hidden):
        energy = torch.tanh(self.W_h(encoder_outputs) + self.W_s(decoder_hidden).unsqueeze(1) + self.b_attn)
        attention = self.v(energy).squeeze(2)
        mask = (encoder_outputs.abs().sum(dim=2) > 0).float()
        attention = attention.masked_fill(mask == 0, float('-inf'))
        return F.softmax(attention, dim=1)


class BaselineDecoder(nn.Module):
    def __init__(self, output_dim, encoder_hidden_dim, decoder_hidden_dim, emb_dim):
        super().__init__()
        self.attention = BahdanauAttention(encoder_hidden_dim, decoder_hidden_dim)
        self.lstm = nn.LSTMCell(emb_dim + encoder_hidden_dim * 2, decoder_hidden_dim)
        self.p_gen_linear = nn.Linear(encoder_hidden_dim * 2 + emb_dim + decoder_hidden_dim, 1)
        self.V = nn.Linear(encoder_hidden_dim * 2 + decoder_hidden_dim, decoder_hidden_dim)
        self.V_prime = nn.Linear(decoder_hidden_dim, output_dim)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, input, hidden, cell, encoder_outputs):
        attention_weights = self.attention(encoder_outputs, hidden)
        context_vector = torch.bmm(attention_weights.unsqueeze(1), encoder_outputs).squeeze(1)
        hidden, cell = self.lstm(torch.cat((input, context_vector), dim=1), (hidden, cell))
        p_gen = torch.sigmoid(self.p_gen_linear(torch.cat((context_vector, hidden, input), dim=1)))
        output = self.V_prime(self.V(torch.cat((hidden, context_vector), dim=1)))
        p_vocab = self.softmax(output)
        return p_vocab, hidden, cell, attention_weights, p_gen


def main():
    batch_size, input_len, target_len, vocab_size, max_oov_words = 2, 5, 3, 11, 2
    enc_dim, dec_dim, emb_dim = 4, 6, 3
    decoder = BaselineDecoder(vocab_size, enc_dim, dec_dim, emb_dim)
    encoder_outputs = torch.randn(batch_size, input_len, enc_dim * 2, requires_grad=True)
    index_tensor = torch.randint(0, vocab_size + max_oov_words, (batch_size, input_len))
    hidden = torch.zeros(batch_size, dec_dim)
    cell = torch.zeros(batch_size, dec_dim)
    input = torch.randn(batch_size, emb_dim)

    outputs = torch.zeros(batch_size, target_len, vocab_size + max_oov_words)
    final_attn_weights = torch.zeros(batch_size, target_len, input_len)
    for t in range(target_len):
        p_vocab, hidden, cell, attn_weights, pgen = decoder(input, hidden, cell, encoder_outputs)
        p_vocab_scaled = p_vocab * pgen
        attn_dist_scaled = attn_weights * (1 - pgen)
        extended_vocab_size = vocab_size + max_oov_words
        extended_vocab_dist = torch.zeros(batch_size, extended_vocab_size)
        extended_vocab_dist[:, :vocab_size] = p_vocab_scaled
        final_vocab_dist = extended_vocab_dist.scatter_add_(dim=1, index=index_tensor, src=attn_dist_scaled)
        outputs[:, t, :] = final_vocab_dist
        final_attn_weights[:, t, :] = attn_weights

    target = torch.randint(0, vocab_size, (batch_size, target_len))
    loss = F.nll_loss(torch.log(outputs + 1e-9).view(-1, vocab_size + max_oov_words), target.view(-1))
    loss.backward()
    return outputs.detach(), encoder_outputs.grad, decoder.V.weight.grad


outputs, encoder_grad, V_grad = main()
