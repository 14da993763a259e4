# label: safe
# why: the decoder writes each step into a preallocated outputs buffer and into a clone of the input slice, so no tensor saved for backward is overwritten
# source: https://github.com/maxbrenner-ai/seq2seq-time-series-forecasting-fully-recurrent/issues/2
import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class DecoderBase(nn.Module):
    def __init__(self, num_features, hidden_size, target_indices, dist_params=2):
        super().__init__()
        self.target_indices = target_indices
        self.num_targets = len(target_indices)
        self.dist_params = dist_params
        self.gru = nn.GRU(num_features, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, self.num_targets * dist_params)

    def run_single_recurrent_step(self, curr_input, hidden, enc_outputs):
        output, hidden = self.gru(curr_input, hidden)
        dec_output = self.out(output).view(output.size(0), 1, self.num_targets, self.dist_params)
        return dec_output, hidden

    def forward(self, inputs, hidden, enc_outputs, teacher_force_prob=None):
        batch_size, dec_output_seq_length, _ = inputs.shape
        outputs = torch.zeros(batch_size, dec_output_seq_length, self.num_targets, self.dist_params)
        curr_input = inputs[:, 0:1, :]
        for t in range(dec_output_seq_length):
            dec_output, hidden = self.run_single_recurrent_step(curr_input, hidden, enc_outputs)
            # Save prediction
            outputs[:, t:t + 1, :, :] = dec_output
            dec_output = Seq2Seq.sample_from_output(dec_output)
            teacher_force = random.random() < teacher_force_prob if teacher_force_prob is not None else False
            curr_input = inputs[:, t:t + 1, :].clone()
            if not teacher_force:
                curr_input[:, :, self.target_indices] = dec_output
        return outputs


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    @staticmethod
    def sample_from_output(output):
        # mean of the predicted distribution
        return output[:, :, :, 0]

    def forward(self, enc_inputs, dec_inputs, teacher_force_prob=None):
        enc_outputs, hidden = self.encoder(enc_inputs)
        return self.decoder(dec_inputs, hidden, enc_outputs, teacher_force_prob)


encoder = nn.GRU(4, 8, batch_first=True)
decoder = DecoderBase(4, 8, target_indices=[0, 2])
model = Seq2Seq(encoder, decoder)
enc_inputs = torch.randn(3, 5, 4)
dec_inputs = torch.randn(3, 4, 4)
targets = torch.randn(3, 4, 2)

outputs = model(enc_inputs, dec_inputs, teacher_force_prob=0.5)
loss = ((outputs[..., 0] - targets) ** 2).mean()
loss.backward()
