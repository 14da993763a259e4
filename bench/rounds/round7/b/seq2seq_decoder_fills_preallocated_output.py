# label: safe
# why: each decoder step is copied into a preallocated zeros buffer that no earlier op saved, and the next step reads out_step itself rather than a slice of the buffer, so the slice writes are harmless.
# source: https://github.com/intel/BigDL/pull/3642
import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class LSTMSeq2Seq(nn.Module):
    def __init__(self, input_feature_num, future_seq_len, output_feature_num, lstm_hidden_dim=8,
                 lstm_layer_num=1, teacher_forcing=False):
        super(LSTMSeq2Seq, self).__init__()
        self.lstm_encoder = nn.LSTM(input_size=input_feature_num, hidden_size=lstm_hidden_dim,
                                    num_layers=lstm_layer_num, batch_first=True)
        self.lstm_decoder = nn.LSTM(input_size=output_feature_num, hidden_size=lstm_hidden_dim,
                                    num_layers=lstm_layer_num, batch_first=True)
        self.fc = nn.Linear(in_features=lstm_hidden_dim, out_features=output_feature_num)
        self.future_seq_len = future_seq_len
        self.output_feature_num = output_feature_num
        self.teacher_forcing = teacher_forcing

    def forward(self, input_seq, target_seq=None):
        x, (hidden, cell) = self.lstm_encoder(input_seq)
        # input feature order should have target dimensions in the first
        decoder_input = input_seq[:, -1, :self.output_feature_num]
        decoder_input = decoder_input.unsqueeze(1)
        decoder_output = torch.zeros(input_seq.shape[0], self.future_seq_len, self.output_feature_num)
        for i in range(self.future_seq_len):
            decoder_output_step, (hidden, cell) = self.lstm_decoder(decoder_input, (hidden, cell))
            out_step = self.fc(decoder_output_step)
            decoder_output[:, i:i + 1, :] = out_step
            if not self.teacher_forcing or target_seq is None:
                # no teaching force
                decoder_input = out_step
            else:
                # with teaching force
                decoder_input = target_seq[:, i:i + 1, :]
        return decoder_output


model = LSTMSeq2Seq(input_feature_num=3, future_seq_len=4, output_feature_num=2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
input_seq = torch.randn(5, 6, 3)
target = torch.randn(5, 4, 2)
pred = model(input_seq)
loss = nn.functional.mse_loss(pred, target)
optimizer.zero_grad()
loss.backward()
