# label: hazard raises
# why: the differentiable attack feeds the resized adversarial image (which requires grad) to a Normalize that iterates over the tensor and calls t.sub_(m).div_(s) on the unbind views
# source: https://github.com/paarthneekhara/AdversarialDeepFakes/issues/23
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        for t, m, s in zip(tensor, self.mean, self.std):
            t.sub_(m).div_(s)  # <-- IPL001: in-place on unbind views of a tensor that requires grad
        return tensor


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


xception_default_data_transforms = {
    'normalize': Compose([Normalize([0.5] * 3, [0.5] * 3)]),
}


def predict_with_model(preprocessed_image, model, post_function=nn.Softmax(dim=1)):
    resized_image = nn.functional.interpolate(preprocessed_image, size=(12, 12), mode="bilinear", align_corners=True)
    norm_transform = xception_default_data_transforms['normalize']
    normalized_image = norm_transform(resized_image)
    logits = model(normalized_image)
    output = post_function(logits)
    _, prediction = torch.max(output, 1)
    return int(prediction.item()), output, logits


def robust_fgsm(input_img, model, max_iter=2, alpha=1 / 255.0, eps=16 / 255.0, desired_acc=0.95):
    transform_functions = [
        lambda x: x,
        lambda x: x + 0.01 * torch.randn_like(x),
    ]
    input_var = autograd.Variable(input_img, requires_grad=True)
    iter_no = 0
    while iter_no < max_iter:
        loss = 0
        all_fooled = True
        for transform_fn in transform_functions:
            transformed_img = transform_fn(input_var)
            prediction, output, logits = predict_with_model(transformed_img, model)
            if output[0][0] < desired_acc:
                all_fooled = False
            loss += torch.clamp(logits[0][1] - logits[0][0] + 10, min=0.0)
        if all_fooled:
            break
        loss /= (1. * len(transform_functions))
        if input_var.grad is not None:
            input_var.grad.data.zero_()
        loss.backward()

        step_adv = input_var.detach() - alpha * torch.sign(input_var.grad.detach())
        total_pert = torch.clamp(step_adv - input_img, -eps, eps)
        input_adv = torch.clamp(input_img + total_pert, 0, 1)
        input_var.data = input_adv.detach()
        iter_no += 1
    return input_var


model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
processed_image = torch.rand(1, 3, 10, 10)
perturbed_image = robust_fgsm(processed_image, model)
