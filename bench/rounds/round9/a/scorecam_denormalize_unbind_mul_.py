# label: hazard raises
# why: the input image was created with requires_grad=True, so denormalize's clone is part of the graph and `channel.mul_(std).add_(mean)` modifies the unbind views produced by iterating over it
# source: https://github.com/haofanwang/Score-CAM/issues/28
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def denormalize(tensor):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    denormalized = tensor.clone()
    for channel, mean, std in zip(denormalized[0], means, stds):
        channel.mul_(std).add_(mean)  # <-- IPL001: in-place on unbind views of a clone that requires grad
    return denormalized


def standardize_and_clip(tensor, min_value=0.0, max_value=1.0):
    tensor = tensor.detach().cpu()
    mean = tensor.mean()
    std = tensor.std()
    if std == 0:
        std += 1e-7
    standardized = tensor.sub(mean).div(std).mul(0.1)
    clipped = standardized.add(0.5).clamp(min_value, max_value)
    return clipped


def format_for_plotting(tensor):
    has_batch_dimension = len(tensor.shape) == 4
    formatted = tensor.clone()
    if has_batch_dimension:
        formatted = tensor.squeeze(0)
    if formatted.shape[0] == 1:
        return formatted.squeeze(0).detach()
    else:
        return formatted.permute(1, 2, 0).detach()


def basic_visualize(input_, gradients):
    input_ = format_for_plotting(denormalize(input_))
    gradients = format_for_plotting(standardize_and_clip(gradients))
    return input_, gradients


class BaseCAM(object):
    def __init__(self, model_dict):
        self.model_arch = model_dict['arch']
        self.gradients = dict()
        self.activations = dict()

        def forward_hook(module, input, output):
            self.activations['value'] = output
            return None

        target_layer = self.model_arch._modules[model_dict['layer_name']]
        target_layer.register_forward_hook(forward_hook)


class ScoreCAM(BaseCAM):
    def forward(self, input, class_idx=None, retain_graph=False):
        b, c, h, w = input.size()
        logit = self.model_arch(input)
        if class_idx is None:
            predicted_class = logit.max(1)[-1]
            score = logit[:, logit.max(1)[-1]].squeeze()
        else:
            predicted_class = torch.LongTensor([class_idx])
            score = logit[:, class_idx].squeeze()
        self.model_arch.zero_grad()
        score.backward(retain_graph=retain_graph)
        activations = self.activations['value']
        b, k, u, v = activations.size()
        score_saliency_map = torch.zeros((1, 1, h, w))
        with torch.no_grad():
            for i in range(k):
                saliency_map = torch.unsqueeze(activations[:, i, :, :], 1)
                saliency_map = F.interpolate(saliency_map, size=(h, w), mode='bilinear', align_corners=False)
                if saliency_map.max() == saliency_map.min():
                    continue
                norm_saliency_map = (saliency_map - saliency_map.min()) / (saliency_map.max() - saliency_map.min())
                output = self.model_arch(input * norm_saliency_map)
                output = F.softmax(output, dim=1)
                score = output[0][predicted_class]
                score_saliency_map += score * saliency_map
        score_saliency_map = F.relu(score_saliency_map)
        score_saliency_map_min, score_saliency_map_max = score_saliency_map.min(), score_saliency_map.max()
        if score_saliency_map_min == score_saliency_map_max:
            return None
        return (score_saliency_map - score_saliency_map_min).div(score_saliency_map_max - score_saliency_map_min).data

    def __call__(self, input, class_idx=None, retain_graph=False):
        return self.forward(input, class_idx, retain_graph)


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        x = self.layer4(self.features(x))
        return self.fc(x.mean(dim=(2, 3)))


model = TinyNet().eval()
scorecam = ScoreCAM({'arch': model, 'layer_name': 'layer4'})
input_ = torch.rand(1, 3, 8, 8)
input_.requires_grad = True  # as apply_transforms does
scorecam_map = scorecam(input_)
shown_image, shown_map = basic_visualize(input_.cpu(), scorecam_map.type(torch.FloatTensor).cpu())
