# label: safe no-twin
# why: gradient accumulation done the usual way: each iteration's loss_3d / accumulation_steps is backpropagated immediately (its graph is consumed before any optimizer.step), and the step only happens every accumulation_steps iterations, so no saved weight is ever stale.
# source: https://github.com/microsoft/voxelpose-pytorch/issues/19
import torch
import torch.nn as nn

torch.manual_seed(0)


class Basic3DBlock(nn.Module):
    def __init__(self, in_planes, out_planes, kernel_size):
        super(Basic3DBlock, self).__init__()
        self.block = nn.Sequential(
            nn.Conv3d(in_planes, out_planes, kernel_size=kernel_size, stride=1, padding=((kernel_size - 1) // 2)),
            nn.BatchNorm3d(out_planes),
            nn.ReLU(True),
        )

    def forward(self, x):
        return self.block(x)


class V2VNet(nn.Module):
    def __init__(self, input_channels, output_channels):
        super(V2VNet, self).__init__()
        self.front_layers = nn.Sequential(Basic3DBlock(input_channels, 8, 3))
        self.output_layer = nn.Conv3d(8, output_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, x):
        x = self.front_layers(x)
        return self.output_layer(x)


class MultiPersonPoseNet(nn.Module):
    def __init__(self, num_joints=3):
        super().__init__()
        self.root_net = V2VNet(num_joints, 1)
        self.pose_net = V2VNet(num_joints, num_joints)
        self.criterion = nn.MSELoss()

    def forward(self, cubes, targets_3d, targets_cord):
        root_cubes = self.root_net(cubes).squeeze(1)
        loss_3d = self.criterion(root_cubes, targets_3d)
        single_pose = self.pose_net(cubes).mean(dim=(2, 3, 4))
        loss_cord = torch.abs(single_pose - targets_cord).mean()
        loss_2d = torch.zeros(1).mean()
        return root_cubes, loss_2d, loss_3d, loss_cord


def train_3d(model, optimizer, loader):
    model.train()
    accumulation_steps = 4
    optimizer.zero_grad()
    for i, (cubes, targets_3d, targets_cord) in enumerate(loader):
        pred, loss_2d, loss_3d, loss_cord = model(cubes, targets_3d, targets_cord)
        loss = loss_2d.mean() + loss_cord.mean() + loss_3d.mean() / accumulation_steps
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    return model


def main():
    model = MultiPersonPoseNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    loader = [(torch.rand(1, 3, 4, 4, 4), torch.rand(1, 4, 4, 4), torch.rand(1, 3)) for _ in range(8)]
    train_3d(model, optimizer, loader)
    return model.root_net.output_layer.weight.detach().clone()


root_weight = main()
