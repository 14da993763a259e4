# label: safe
# why: `x += x` right after BatchNorm doubles a tensor that no backward formula saved (batch_norm keeps its input, not its output), so autograd is unaffected; the issue was about the missing skip connection, not about autograd.
# source: https://github.com/werner-duvaud/muzero-general/issues/89
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def conv3x3(in_channels, out_channels, stride=1):
    return torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)


class ResidualBlock(torch.nn.Module):
    def __init__(self, num_channels, stride=1):
        super().__init__()
        self.conv1 = conv3x3(num_channels, num_channels, stride)
        self.bn1 = torch.nn.BatchNorm2d(num_channels)
        self.conv2 = conv3x3(num_channels, num_channels)
        self.bn2 = torch.nn.BatchNorm2d(num_channels)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = torch.nn.functional.relu(x)
        x = self.conv2(x)
        x = self.bn2(x)
        x += x
        x = torch.nn.functional.relu(x)
        return x


class RepresentationNetwork(torch.nn.Module):
    def __init__(self, observation_shape, num_blocks, num_channels):
        super().__init__()
        self.conv = conv3x3(observation_shape[0], num_channels)
        self.bn = torch.nn.BatchNorm2d(num_channels)
        self.resblocks = torch.nn.ModuleList([ResidualBlock(num_channels) for _ in range(num_blocks)])

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = torch.nn.functional.relu(x)
        for block in self.resblocks:
            x = block(x)
        return x


class MuZeroResidualNetwork(torch.nn.Module):
    def __init__(self, observation_shape=(3, 6, 6), action_space_size=4, num_blocks=2, num_channels=8):
        super().__init__()
        self.representation_network = RepresentationNetwork(observation_shape, num_blocks, num_channels)
        flat = num_channels * observation_shape[1] * observation_shape[2]
        self.fc_value = torch.nn.Linear(flat, 5)
        self.fc_policy = torch.nn.Linear(flat, action_space_size)

    def initial_inference(self, observation):
        encoded_state = self.representation_network(observation)
        flat = encoded_state.flatten(1)
        return self.fc_value(flat), self.fc_policy(flat), encoded_state


model = MuZeroResidualNetwork()
observation_batch = torch.randn(4, 3, 6, 6)
target_value = torch.softmax(torch.randn(4, 5), dim=1)
target_policy = torch.softmax(torch.randn(4, 4), dim=1)

value, policy_logits, hidden_state = model.initial_inference(observation_batch)
value_loss = (-target_value * F.log_softmax(value, dim=1)).sum(1)
policy_loss = (-target_policy * F.log_softmax(policy_logits, dim=1)).sum(1)
loss = (value_loss + policy_loss).mean()
loss.backward()
