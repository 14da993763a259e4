# label: safe
# why: the fixed QaNetEncoderBlock uses out-of-place transpose on both sides of the convolution, so the ReLU output saved by ReluBackward is never modified.
# source: https://github.com/allenai/allennlp-models/commit/218e87c16f063b2c7bc5a7df3ebfde0059900652 (qanet_encoder.py after the fix)
import math

import torch

torch.manual_seed(0)


class LayerNorm(torch.nn.Module):
    def __init__(self, dimension: int) -> None:
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.ones(dimension))
        self.beta = torch.nn.Parameter(torch.zeros(dimension))

    def forward(self, tensor: torch.Tensor):
        mean = tensor.mean(-1, keepdim=True)
        std = tensor.std(-1, unbiased=False, keepdim=True)
        return self.gamma * (tensor - mean) / (std + 1e-6) + self.beta


def add_positional_features(tensor: torch.Tensor, min_timescale: float = 1.0, max_timescale: float = 1.0e4):
    _, timesteps, hidden_dim = tensor.size()
    timestep_range = torch.arange(timesteps, dtype=torch.float)
    num_timescales = hidden_dim // 2
    timescale_range = torch.arange(num_timescales, dtype=torch.float)
    log_timescale_increments = math.log(float(max_timescale) / float(min_timescale)) / float(num_timescales - 1)
    inverse_timescales = min_timescale * torch.exp(timescale_range * -log_timescale_increments)
    scaled_time = timestep_range.unsqueeze(1) * inverse_timescales.unsqueeze(0)
    sinusoids = torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], 1)
    return tensor + sinusoids.unsqueeze(0)


class ResidualWithLayerDropout(torch.nn.Module):
    def __init__(self, undecayed_dropout_prob: float = 0.5) -> None:
        super().__init__()
        self.undecayed_dropout_prob = undecayed_dropout_prob

    def forward(self, layer_input, layer_output, sublayer: int = 1, total_sublayers: int = 1):
        if self.training and self.undecayed_dropout_prob > 0:
            dropout_prob = 1.0 * self.undecayed_dropout_prob * sublayer / total_sublayers
            if torch.rand(1).item() < dropout_prob:
                return layer_input
            return layer_output + layer_input
        return layer_output + layer_input


class QaNetEncoderBlock(torch.nn.Module):
    def __init__(self, input_dim, hidden_dim, feedforward_hidden_dim, num_convs, conv_kernel_size,
                 dropout_prob=0.1, layer_dropout_undecayed_prob=0.1):
        super().__init__()
        self._conv_norm_layers = torch.nn.ModuleList(LayerNorm(hidden_dim) for _ in range(num_convs))
        self._conv_layers = torch.nn.ModuleList()
        for _ in range(num_convs):
            padding = torch.nn.ConstantPad1d((conv_kernel_size // 2, (conv_kernel_size - 1) // 2), 0)
            depthwise_conv = torch.nn.Conv1d(hidden_dim, hidden_dim, conv_kernel_size, groups=hidden_dim)
            pointwise_conv = torch.nn.Conv1d(hidden_dim, hidden_dim, 1)
            self._conv_layers.append(torch.nn.Sequential(padding, depthwise_conv, pointwise_conv, torch.nn.ReLU()))
        self.feedforward_norm_layer = LayerNorm(hidden_dim)
        self.feedforward = torch.nn.Sequential(
            torch.nn.Linear(hidden_dim, feedforward_hidden_dim), torch.nn.ReLU(),
            torch.nn.Linear(feedforward_hidden_dim, hidden_dim),
        )
        self.dropout = torch.nn.Dropout(dropout_prob)
        self.residual_with_layer_dropout = ResidualWithLayerDropout(layer_dropout_undecayed_prob)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        output = add_positional_features(inputs)
        total_sublayers = len(self._conv_layers) + 1
        sublayer_count = 0
        for conv_norm_layer, conv_layer in zip(self._conv_norm_layers, self._conv_layers):
            conv_norm_out = self.dropout(conv_norm_layer(output))
            conv_out = self.dropout(conv_layer(conv_norm_out.transpose(1, 2)).transpose(1, 2))
            sublayer_count += 1
            output = self.residual_with_layer_dropout(output, conv_out, sublayer_count, total_sublayers)

        feedforward_norm_out = self.dropout(self.feedforward_norm_layer(output))
        feedforward_out = self.dropout(self.feedforward(feedforward_norm_out))
        sublayer_count += 1
        output = self.residual_with_layer_dropout(output, feedforward_out, sublayer_count, total_sublayers)
        return output


def main():
    encoder = QaNetEncoderBlock(input_dim=8, hidden_dim=8, feedforward_hidden_dim=16, num_convs=2,
                                conv_kernel_size=3, dropout_prob=0.0, layer_dropout_undecayed_prob=0.0)
    span_start = torch.nn.Linear(8, 1)
    passage = torch.randn(2, 7, 8)
    encoded = encoder(passage)
    logits = span_start(encoded).squeeze(-1)
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor([2, 5]))
    loss.backward()
    return loss.detach(), encoder._conv_layers[0][1].weight.grad


loss, depthwise_grad = main()
