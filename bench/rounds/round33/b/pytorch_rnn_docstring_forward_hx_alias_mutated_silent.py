# label: hazard silent
# why: the older nn.RNN docstring forward sets `h_t_minus_1 = hx` and `h_t = hx`, so `h_t[layer] = torch.tanh(...)` writes every new state into the caller's initial state `hx` (and into the tensor whose row `output.append(h_t[-1])` keeps); checking the example against `rnn(input, h0)` with the same `h0` afterwards compares against a corrupted initial state and stale outputs (PR: "reference-related issues that may result in unintended modification").
# source: https://github.com/pytorch/pytorch/pull/153620
import torch
import torch.nn as nn

torch.manual_seed(0)

batch_first = False
num_layers = 1
input_size = 10
hidden_size = 20

rnn = nn.RNN(input_size, hidden_size, num_layers)
weight_ih = [getattr(rnn, f"weight_ih_l{layer}") for layer in range(num_layers)]
bias_ih = [getattr(rnn, f"bias_ih_l{layer}") for layer in range(num_layers)]
weight_hh = [getattr(rnn, f"weight_hh_l{layer}") for layer in range(num_layers)]
bias_hh = [getattr(rnn, f"bias_hh_l{layer}") for layer in range(num_layers)]


# Efficient implementation equivalent to the following with bidirectional=False
def forward(x, hx=None):
    if batch_first:
        x = x.transpose(0, 1)
    seq_len, batch_size, _ = x.size()
    if hx is None:
        hx = torch.zeros(num_layers, batch_size, hidden_size)
    h_t_minus_1 = hx
    h_t = hx
    output = []
    for t in range(seq_len):
        for layer in range(num_layers):
            h_t[layer] = torch.tanh(  # <-- IPL004, IPL002
                x[t] @ weight_ih[layer].T
                + bias_ih[layer]
                + h_t_minus_1[layer] @ weight_hh[layer].T
                + bias_hh[layer]
            )
        output.append(h_t[-1])
        h_t_minus_1 = h_t
    output = torch.stack(output)
    if batch_first:
        output = output.transpose(0, 1)
    return output, h_t


with torch.no_grad():
    input = torch.randn(5, 3, input_size)
    h0 = torch.randn(num_layers, 3, hidden_size)
    output, hn = forward(input, h0)
    reference, reference_hn = rnn(input, h0)
    max_err = (output - reference).abs().max()
