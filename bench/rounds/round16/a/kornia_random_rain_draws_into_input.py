# label: hazard silent
# why: RandomRain.apply_transform draws the rain streaks straight into the `image` tensor it receives and returns it, so the caller's clean batch (used as the de-raining target) becomes the rainy batch too.
# source: https://github.com/kornia/kornia/pull/2514
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RandomRain(nn.Module):
    def __init__(self, number_of_drops=(4, 8), drop_height=(2, 4), drop_width=(-2, 2)):
        super().__init__()
        self.number_of_drops = number_of_drops
        self.drop_height = drop_height
        self.drop_width = drop_width

    def generate_parameters(self, batch_size):
        return {
            "number_of_drops_factor": torch.randint(self.number_of_drops[0], self.number_of_drops[1] + 1, (batch_size,)),
            "coordinates_factor": torch.rand(batch_size, self.number_of_drops[1], 2),
            "drop_height_factor": torch.randint(self.drop_height[0], self.drop_height[1] + 1, (batch_size,)),
            "drop_width_factor": torch.randint(self.drop_width[0], self.drop_width[1] + 1, (batch_size,)),
        }

    def apply_transform(self, image, params):
        for i in range(image.shape[0]):
            number_of_drops = int(params["number_of_drops_factor"][i])
            coordinates_of_drops = params["coordinates_factor"][i][:number_of_drops]
            height_of_drop = int(params["drop_height_factor"][i])
            width_of_drop = int(params["drop_width_factor"][i])

            random_y_coords = coordinates_of_drops[:, 0] * (image.shape[2] - height_of_drop - 1)
            if width_of_drop > 0:
                random_x_coords = coordinates_of_drops[:, 1] * (image.shape[3] - width_of_drop - 1)
            else:
                random_x_coords = coordinates_of_drops[:, 1] * (image.shape[3] + width_of_drop - 1) - width_of_drop
            coords = torch.cat([random_y_coords[None], random_x_coords[None]], dim=0).to(image.device, dtype=torch.long)

            size_of_line = max(height_of_drop, abs(width_of_drop))
            x = torch.linspace(start=0, end=height_of_drop, steps=size_of_line).long()
            y = torch.linspace(start=0, end=width_of_drop, steps=size_of_line).long()
            for k in range(x.shape[0]):
                image[i, :, coords[0] + x[k], coords[1] + y[k]] = 200 / 255  # <-- IPL004: draws into the caller's batch
        return image

    def forward(self, image):
        return self.apply_transform(image, self.generate_parameters(image.shape[0]))


derain_net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))
rain = RandomRain()

clean = torch.rand(2, 3, 16, 16) * 0.5
rainy = rain(clean)
restored = derain_net(rainy)
loss = F.l1_loss(restored, clean)
loss.backward()
grad = derain_net[0].weight.grad.clone()
