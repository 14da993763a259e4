# label: safe
# why: each step's decoder output is copied into a plain zeros buffer that nothing saved for backward, the usual batched seq2seq pattern
# source: https://github.com/spro/practical-pytorch/issues/27
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
SOS_token = 0


class Attn(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.attn = nn.Linear(hidden_size, hidden_size)

    def forward(self, hidden, encoder_outputs):
        # hidden: 1 x B x H, encoder_outputs: S x B x H
        energies = (self.attn(encoder_outputs) * hidden).sum(2)  # S x B
        return F.softmax(energies.t(), dim=1).unsqueeze(1)  # B x 1 x S


class LuongAttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, n_layers=1):
        super().__init__()
        self.output_size = output_size
        self.n_layers = n_layers
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers)
        self.concat = nn.Linear(hidden_size * 2, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)
        self.attn = Attn(hidden_size)

    def forward(self, input_seq, last_hidden, encoder_outputs):
        embedded = self.embedding(input_seq).unsqueeze(0)
        rnn_output, hidden = self.gru(embedded, last_hidden)
        attn_weights = self.attn(rnn_output, encoder_outputs)
        context = attn_weights.bmm(encoder_outputs.transpose(0, 1))
        concat_input = torch.cat((rnn_output.squeeze(0), context.squeeze(1)), 1)
        concat_output = torch.tanh(self.concat(concat_input))
        output = self.out(concat_output)
        return output, hidden, attn_weights


def masked_cross_entropy(logits, target, length):
    log_probs = F.log_softmax(logits, dim=-1)
    losses = -log_probs.gather(2, target.unsqueeze(2)).squeeze(2)
    mask = torch.arange(target.size(1)).unsqueeze(0) < length.unsqueeze(1)
    return (losses * mask.float()).sum() / length.float().sum()


hidden_size, vocab, small_batch_size = 8, 10, 3
encoder = nn.GRU(hidden_size, hidden_size, 1)
decoder_test = LuongAttnDecoderRNN(hidden_size, vocab)
input_batches = torch.randn(5, small_batch_size, hidden_size)
target_batches = torch.randint(1, vocab, (4, small_batch_size))
target_lengths = [4, 3, 2]

encoder_outputs, encoder_hidden = encoder(input_batches)
max_target_length = max(target_lengths)
decoder_input = torch.LongTensor([SOS_token] * small_batch_size)
decoder_hidden = encoder_hidden[:decoder_test.n_layers]
all_decoder_outputs = torch.zeros(max_target_length, small_batch_size, decoder_test.output_size)

for t in range(max_target_length):
    decoder_output, decoder_hidden, decoder_attn = decoder_test(decoder_input, decoder_hidden, encoder_outputs)
    all_decoder_outputs[t] = decoder_output  # Store this step's outputs
    decoder_input = target_batches[t]

loss = masked_cross_entropy(
    all_decoder_outputs.transpose(0, 1).contiguous(),
    target_batches.transpose(0, 1).contiguous(),
    torch.tensor(target_lengths),
)
loss.backward()
