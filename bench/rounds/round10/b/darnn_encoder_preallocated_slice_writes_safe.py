# label: safe
# why: the DA-RNN encoder writes each step's attention-weighted input and hidden state into preallocated zero buffers with slice assignment; each slice is written once and nothing read the buffers before, so the in-place writes are harmless.
# source: https://github.com/Seanny123/da-rnn/issues/14
import torch
from torch import nn
import torch.nn.functional as tf

torch.manual_seed(0)


def init_hidden(x, hidden_size: int):
    return torch.zeros(1, x.size(0), hidden_size)


class Encoder(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, T: int):
        super(Encoder, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.T = T
        self.lstm_layer = nn.LSTM(input_size=input_size, hidden_size=hidden_size, num_layers=1)
        self.attn_linear = nn.Linear(in_features=2 * hidden_size + T - 1, out_features=1)

    def forward(self, input_data):
        input_weighted = torch.zeros(input_data.size(0), self.T - 1, self.input_size)
        input_encoded = torch.zeros(input_data.size(0), self.T - 1, self.hidden_size)
        hidden = init_hidden(input_data, self.hidden_size)
        cell = init_hidden(input_data, self.hidden_size)
        for t in range(self.T - 1):
            x = torch.cat((hidden.repeat(self.input_size, 1, 1).permute(1, 0, 2),
                           cell.repeat(self.input_size, 1, 1).permute(1, 0, 2),
                           input_data.permute(0, 2, 1)), dim=2)
            x = self.attn_linear(x.view(-1, self.hidden_size * 2 + self.T - 1))
            attn_weights = tf.softmax(x.view(-1, self.input_size), dim=1)
            weighted_input = torch.mul(attn_weights, input_data[:, t, :])
            _, lstm_states = self.lstm_layer(weighted_input.unsqueeze(0), (hidden, cell))
            hidden = lstm_states[0]
            cell = lstm_states[1]
            input_weighted[:, t, :] = weighted_input
            input_encoded[:, t, :] = hidden
        return input_weighted, input_encoded


class Decoder(nn.Module):
    def __init__(self, encoder_hidden_size, decoder_hidden_size, T, out_feats=1):
        super().__init__()
        self.T = T
        self.decoder_hidden_size = decoder_hidden_size
        self.attn_layer = nn.Sequential(nn.Linear(2 * decoder_hidden_size + encoder_hidden_size, encoder_hidden_size),
                                        nn.Tanh(), nn.Linear(encoder_hidden_size, 1))
        self.lstm_layer = nn.LSTM(input_size=out_feats, hidden_size=decoder_hidden_size)
        self.fc = nn.Linear(encoder_hidden_size + out_feats, out_feats)
        self.fc_final = nn.Linear(decoder_hidden_size + encoder_hidden_size, out_feats)

    def forward(self, input_encoded, y_history):
        hidden = init_hidden(input_encoded, self.decoder_hidden_size)
        cell = init_hidden(input_encoded, self.decoder_hidden_size)
        context = torch.zeros(input_encoded.size(0), input_encoded.size(2))
        for t in range(self.T - 1):
            x = torch.cat((hidden.repeat(self.T - 1, 1, 1).permute(1, 0, 2),
                           cell.repeat(self.T - 1, 1, 1).permute(1, 0, 2),
                           input_encoded), dim=2)
            x = tf.softmax(self.attn_layer(x.view(-1, 2 * self.decoder_hidden_size + input_encoded.size(2))).view(-1, self.T - 1), dim=1)
            context = torch.bmm(x.unsqueeze(1), input_encoded)[:, 0, :]
            y_tilde = self.fc(torch.cat((context, y_history[:, t]), dim=1))
            _, lstm_output = self.lstm_layer(y_tilde.unsqueeze(0), (hidden, cell))
            hidden = lstm_output[0]
            cell = lstm_output[1]
        return self.fc_final(torch.cat((hidden[0], context), dim=1))


T, n_feats = 5, 3
encoder = Encoder(n_feats, 4, T)
decoder = Decoder(4, 4, T)
X = torch.randn(2, T - 1, n_feats)
y_history = torch.randn(2, T - 1, 1)
y_target = torch.randn(2, 1)
input_weighted, input_encoded = encoder(X)
y_pred = decoder(input_encoded, y_history)
loss = nn.functional.mse_loss(y_pred, y_target)
loss.backward()
