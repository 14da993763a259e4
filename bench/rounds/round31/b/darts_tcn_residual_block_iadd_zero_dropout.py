# label: hazard raises
# why: with `dropout=0.0` the shared nn.Dropout returns the ReLU output itself, so `x += residual` in _ResidualBlock.forward overwrites the tensor ReluBackward saved; the training step's backward fails.
# source: https://github.com/unit8co/darts/commit/3308f72fbb9f542a36c5dc87081b450267218297
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _ResidualBlock(nn.Module):

    def __init__(self,
                 num_filters: int,
                 kernel_size: int,
                 dilation_base: int,
                 dropout_fn,
                 weight_norm: bool,
                 nr_blocks_below: int,
                 num_layers: int,
                 input_size: int,
                 target_size: int):
        super(_ResidualBlock, self).__init__()

        self.dilation_base = dilation_base
        self.kernel_size = kernel_size
        self.dropout_fn = dropout_fn
        self.num_layers = num_layers
        self.nr_blocks_below = nr_blocks_below

        input_dim = input_size if nr_blocks_below == 0 else num_filters
        output_dim = target_size if nr_blocks_below == num_layers - 1 else num_filters
        self.conv1 = nn.Conv1d(input_dim, num_filters, kernel_size, dilation=(dilation_base ** nr_blocks_below))
        self.conv2 = nn.Conv1d(num_filters, output_dim, kernel_size, dilation=(dilation_base ** nr_blocks_below))
        if weight_norm:
            self.conv1, self.conv2 = nn.utils.weight_norm(self.conv1), nn.utils.weight_norm(self.conv2)

        if input_dim != output_dim:
            self.conv3 = nn.Conv1d(input_dim, output_dim, 1)

    def forward(self, x):
        residual = x

        # first step
        left_padding = (self.dilation_base ** self.nr_blocks_below) * (self.kernel_size - 1)
        x = F.pad(x, (left_padding, 0))
        x = self.dropout_fn(F.relu(self.conv1(x)))

        # second step
        x = F.pad(x, (left_padding, 0))
        x = self.conv2(x)
        if self.nr_blocks_below < self.num_layers - 1:
            x = F.relu(x)
        x = self.dropout_fn(x)

        # add residual
        if self.conv1.in_channels != self.conv2.out_channels:
            residual = self.conv3(residual)
        x += residual  # <-- IPL001

        return x


class _TCNModule(nn.Module):
    def __init__(self,
                 input_size: int,
                 input_chunk_length: int,
                 kernel_size: int,
                 num_filters: int,
                 num_layers,
                 dilation_base: int,
                 weight_norm: bool,
                 target_size: int,
                 nr_params: int,
                 target_length: int,
                 dropout: float):
        super(_TCNModule, self).__init__()

        # Defining parameters
        self.input_size = input_size
        self.input_chunk_length = input_chunk_length
        self.n_filters = num_filters
        self.kernel_size = kernel_size
        self.target_length = target_length
        self.target_size = target_size
        self.nr_params = nr_params
        self.dilation_base = dilation_base
        self.dropout = nn.Dropout(p=dropout)

        # If num_layers is not passed, compute number of layers needed for full history coverage
        if num_layers is None and dilation_base > 1:
            num_layers = math.ceil(math.log((input_chunk_length - 1) * (dilation_base - 1) / (kernel_size - 1) / 2 + 1,
                                            dilation_base))
        elif num_layers is None:
            num_layers = math.ceil((input_chunk_length - 1) / (kernel_size - 1) / 2)
        self.num_layers = num_layers

        # Building TCN module
        self.res_blocks_list = []
        for i in range(num_layers):
            res_block = _ResidualBlock(num_filters, kernel_size, dilation_base,
                                       self.dropout, weight_norm, i, num_layers,
                                       self.input_size, target_size * nr_params)
            self.res_blocks_list.append(res_block)
        self.res_blocks = nn.ModuleList(self.res_blocks_list)

    def forward(self, x):
        # data is of size (batch_size, input_chunk_length, input_size)
        batch_size = x.size(0)
        x = x.transpose(1, 2)

        for res_block in self.res_blocks_list:
            x = res_block(x)

        x = x.transpose(1, 2)
        x = x.view(batch_size, self.input_chunk_length, self.target_size, self.nr_params)

        return x


def main():
    input_chunk_length, output_chunk_length = 12, 4
    model = _TCNModule(input_size=2, input_chunk_length=input_chunk_length, kernel_size=3, num_filters=4,
                       num_layers=None, dilation_base=2, weight_norm=False, target_size=1, nr_params=1,
                       target_length=output_chunk_length, dropout=0.0)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    past_target = torch.randn(8, input_chunk_length, 2)
    future_target = torch.randn(8, output_chunk_length, 1)

    output = model(past_target)
    prediction = output[:, -output_chunk_length:, :, 0]
    loss = F.mse_loss(prediction, future_target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach(), model.res_blocks[0].conv1.weight.detach().clone()


loss, conv1_weight = main()
