# label: safe
# why: in ResnetNetwork.forward the residual `x += block_x` adds in place into the output of the last residual Conv2d, which the convolution's backward does not need, while the ReLU outputs it saved are separate tensors, so gradients are unaffected.
# source: https://github.com/StepNeverStop/RLs/blob/25cc97c96cbb19fe859c9387b7547cbada2c89f2/rls/nn/represents/visuals.py (ResnetNetwork)
import torch as th
import torch.nn as nn
import torch.nn.functional as F

th.manual_seed(0)


class ResnetNetwork(nn.Module):

    def __init__(self, visual_dim):
        super().__init__()
        self.out_channels = [8, 8]
        in_channels = [visual_dim[-1]] + self.out_channels[:-1]
        self.res_blocks = 2
        for i in range(len(self.out_channels)):
            setattr(self, 'conv' + str(i), nn.Conv2d(
                in_channels=in_channels[i], out_channels=self.out_channels[i], kernel_size=[3, 3], stride=(1, 1)))
            setattr(self, 'pool' + str(i), nn.MaxPool2d(kernel_size=[3, 3], stride=[2, 2], padding=1))
            for j in range(self.res_blocks):
                setattr(self, 'resblock' + str(i) + 'conv' + str(j), nn.Conv2d(
                    in_channels=self.out_channels[i], out_channels=self.out_channels[i], kernel_size=[3, 3],
                    stride=(1, 1), padding='same'))
        self.flatten = nn.Flatten()

    def forward(self, x):
        for i in range(len(self.out_channels)):
            x = getattr(self, 'conv' + str(i))(x)
            block_x = x = getattr(self, 'pool' + str(i))(x)
            for j in range(self.res_blocks):
                x = F.relu(x)
                x = getattr(self, 'resblock' + str(i) + 'conv' + str(j))(x)
            x += block_x
        x = F.relu(x)
        x = self.flatten(x)
        return x


class Critic(nn.Module):
    def __init__(self, visual_dim, action_dim):
        super().__init__()
        self.repre = ResnetNetwork(visual_dim)
        self.head = nn.LazyLinear(action_dim)

    def forward(self, obs):
        return self.head(self.repre(obs))


def main():
    critic = Critic(visual_dim=(16, 16, 3), action_dim=4)
    obs = th.randn(4, 3, 16, 16)
    q = critic(obs)
    target = th.randn(4, 4)
    loss = F.mse_loss(q, target)
    loss.backward()
    return loss.detach(), critic.repre.conv0.weight.grad, critic.repre.resblock1conv1.weight.grad


loss, conv_grad, res_grad = main()
